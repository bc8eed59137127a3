"""The ordinal fair average (issue 19, MODELS.md section 8), checked by hand on a tiny fit.

The fair average of a system is the expected rating by a typical rater of the design
(severity 0, the panel's geometric-mean discrimination) averaged over the system's own
answers, per draw, with every answer's latent quality (residual included); under a
sentence-level design, over the answer's rated sentences first. It is not the expected
rating of one average answer, which with a wide residual spread collapses systems of
different quality onto one level.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from scipy.special import expit

from raterstats.models.ordinal import system_scores

CUTS = np.array([-6.0, -2.0, 2.0, 6.0])  # 5 levels


def expected(lp: float, cuts: np.ndarray = CUTS) -> float:
    """E[y] = sum_k k P(y = k), written out term by term."""
    cum = [0.0, *[float(expit(c - lp)) for c in cuts], 1.0]
    return sum(k * (cum[k] - cum[k - 1]) for k in range(1, 6))


def tiny_fit() -> xr.DataTree:
    """One draw of a fit: 2 systems (a: answers i0, i1; b: answer i2), one dimension, a
    whole-answer design 'coarse' and a sentence design 'fine' (sentences s1, s2 of i0 and
    s3 of i2 rated fine; i1 has no sentence rated)."""
    eta = np.array([8.0, -8.0, 1.0])  # a's answers far apart; b's in the middle
    post = xr.Dataset(
        {
            "eta": (("chain", "draw", "item", "dimension"), eta.reshape(1, 1, 3, 1)),
            "system_effect": (("chain", "draw", "dimension", "system"), [[[[-0.5, 0.5]]]]),
            "log_discrimination_mean": (
                ("chain", "draw", "dimension", "design"),
                np.log([[[[1.0, 0.5]]]]),
            ),
            "cutpoints": (
                ("chain", "draw", "dimension", "design", "cut"),
                np.stack([CUTS, CUTS + 1.0]).reshape(1, 1, 1, 2, 4),
            ),
            "sigma_sentence": (("chain", "draw", "dimension"), [[[2.0]]]),
            "sentence_z": (("chain", "draw", "sentence", "dimension"), [[[[1.0], [-1.0], [0.5]]]]),
        },
        coords={
            "item": ["i0", "i1", "i2"],
            "dimension": ["quality"],
            "design": ["coarse", "fine"],
            "system": ["a", "b"],
            "sentence": ["i0#1", "i0#2", "i2#1"],
            "cut": [1, 2, 3, 4],
        },
    )
    const = xr.Dataset(
        {
            "item_system": ("item", ["a", "a", "b"]),
            "design_has_sentences": ("design", [False, True]),
            "sentence_item": ("sentence", ["i0", "i0", "i2"]),
            # ratings: coarse of every answer; fine of the three sentences (1-based ids)
            "obs_design": ("rating_id", [0, 0, 0, 1, 1, 1]),
            "obs_sentence": ("rating_id", [0, 0, 0, 1, 2, 3]),
        },
        coords={"item": post["item"].values, "design": post["design"].values},
        attrs={"link": "logit", "n_levels": 5},
    )
    obs = xr.Dataset(
        {"rating": ("rating_id", [3] * 6)}, attrs={"levels": ["1", "2", "3", "4", "5"]}
    )
    dt = xr.DataTree(
        children={
            "posterior": xr.DataTree(post),
            "constant_data": xr.DataTree(const),
            "observed_data": xr.DataTree(obs),
        }
    )
    dt.attrs["model"] = "ordinal_raters"
    return dt


def test_fair_average_is_the_mean_over_the_systems_answers_by_hand():
    sc = system_scores(tiny_fit())
    fa = sc["fair_average"].isel(chain=0, draw=0, dimension=0)
    # coarse: typical rater lambda = 1, cuts CUTS; system a: mean over i0 and i1
    assert float(fa.sel(design="coarse", system="a")) == pytest.approx(
        (expected(8.0) + expected(-8.0)) / 2, abs=1e-12
    )
    assert float(fa.sel(design="coarse", system="b")) == pytest.approx(expected(1.0), abs=1e-12)
    # fine: lambda = 0.5, cuts + 1, latent eta + tau z of each rated sentence; a's only
    # answer with rated sentences is i0 (its two sentences averaged), b's is i2
    fine = CUTS + 1.0
    a_fine = (expected(0.5 * (8.0 + 2.0), fine) + expected(0.5 * (8.0 - 2.0), fine)) / 2
    assert float(fa.sel(design="fine", system="a")) == pytest.approx(a_fine, abs=1e-12)
    b_fine = expected(0.5 * (1.0 + 1.0), fine)
    assert float(fa.sel(design="fine", system="b")) == pytest.approx(b_fine, abs=1e-12)
    assert sc["n_answers"].sel(design="coarse").values.tolist() == [2, 1]
    assert sc["n_answers"].sel(design="fine").values.tolist() == [1, 1]
    # the latent score is the system effect itself
    assert sc["latent"].sel(system="b").item() == 0.5


def test_fair_average_is_not_the_rating_of_an_average_answer():
    """issue 19: residuals wide against the cut-point spacing (high agreement) and system
    effects small against them. System a's answers sit at 7 and 5, b's at -6: the fair
    averages follow the answers (about 4.5 and 1.5), where the expected ratings of the
    systems' average answers (eta = s = +-0.3, the old definition) collapse near 3."""
    dt = tiny_fit()
    post = dt["posterior"].to_dataset()
    post["eta"] = post["eta"].copy(data=np.array([7.0, 5.0, -6.0]).reshape(1, 1, 3, 1))
    post["system_effect"] = post["system_effect"].copy(data=[[[[0.3, -0.3]]]])
    dt["posterior"] = xr.DataTree(post)
    fa = system_scores(dt)["fair_average"].isel(chain=0, draw=0, dimension=0)
    a, b = (float(fa.sel(design="coarse", system=m)) for m in ("a", "b"))
    assert a == pytest.approx((expected(7.0) + expected(5.0)) / 2, abs=1e-12)
    assert b == pytest.approx(expected(-6.0), abs=1e-12)
    assert a - b > 2.9
    assert expected(0.3) - expected(-0.3) < 0.3  # the average answers' ratings
