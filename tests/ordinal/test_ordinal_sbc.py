"""Simulation-based calibration (Talts et al. 2018) of OrdinalRaters on a small design.

Parameters are drawn from the model's priors, ratings simulated from them, the model fitted
by NUTS, and the rank of each true parameter among the posterior draws recorded; with a
correct sampler and model the ranks are uniform (chi-square test per parameter).

Issue 19: the fits use the model's current parametrisation and priors: the priors stated in
a latent unit (fixed at :data:`UNIT` here, so that the prior the parameters are drawn from
is the one fitted; ``latent_unit="auto"`` measures it from the data, an empirical-Bayes
choice outside SBC's premise), the latent-scale coordinate of the sampler, and the centred
rater deviations with the rater level integrated out (``centred=True``: the same model,
another parametrisation; the truth is drawn non-centred).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import xarray as xr

from raterstats import OrdinalRaters, OrdinalScale, Ratings, read_ratings
from raterstats.design import simulation_based_calibration
from raterstats.models.ordinal import Block, PriorConst, lp_and_cuts

N_REPLICATES = 100
N_BINS = 5
THIN = 8  # every 8th of 2 x 400 posterior draws: 100 per replicate (ranks 0..100)
UNIT = 2.0  # the latent unit the priors are stated in (issue 19)


def design_frame() -> pl.DataFrame:
    """4 questions x 3 systems, 3 raters rating every answer coarse and 2 sentences fine."""
    rows = []
    for q in range(4):
        for m, sys in enumerate(("a", "b", "c")):
            item = f"q{q}-{sys}"
            for j in range(3):
                base = {
                    "item": item,
                    "rater": f"r{j}",
                    "system": sys,
                    "question": f"q{q}",
                    "length": 60.0 + 40 * m + 10 * q,
                    "dimension": "quality",
                }
                rows.append(base | {"design": "coarse", "segment": None})
                for s in ("1", "2"):
                    rows.append(base | {"design": "fine", "segment": s})
    return pl.DataFrame(rows, schema_overrides={"segment": pl.String})


def prior_draw(layout, rng: np.random.Generator) -> np.ndarray:
    """A draw of the unconstrained vector from the model's default priors."""
    x = np.zeros(layout.ndim)
    for b in Block:
        name = b.name.lower()
        sl = layout.block(b)
        lo, hi = sl.start, sl.stop
        if hi == lo:
            continue
        if name.startswith("log_"):
            scale = layout.prior_scale[name]
            x[lo:hi] = np.log(np.abs(rng.normal(0.0, scale, hi - lo)))
        elif b == Block.LM:
            x[lo:hi] = rng.normal(0.0, 0.5, hi - lo)
        elif b == Block.CUTS:  # K - 1 ordered N(0, 3 u) cut-points per dimension x design
            k1 = layout.n_levels - 1
            sd = layout.constant(PriorConst.CUT_SD, 0)  # one dimension
            c = np.sort(rng.normal(0.0, sd, (hi - lo) // k1 * k1).reshape(-1, k1), axis=1)
            x[lo:hi] = np.concatenate([c[:, :1], np.log(np.diff(c, axis=1))], axis=1).ravel()
        elif b == Block.BETA:  # N(0, 1 u) length effects
            x[lo:hi] = rng.normal(0.0, layout.constant(PriorConst.BETA_SD, 0), hi - lo)
        else:  # standard normals and N(0, 1) effects
            x[lo:hi] = rng.normal(0.0, 1.0, hi - lo)
    # the sentence-scale block holds log tau + m[d, gs] (a shear; see the kernels)
    gs, ref = layout.sentence_design, layout.reference
    tau, lm_block = layout.block(Block.LOG_TAU), layout.block(Block.LM)
    if gs >= 0 and tau.stop > tau.start:
        lm = x[lm_block].reshape(layout.n_dim, layout.n_design - 1)
        x[tau] += lm[:, gs if gs < ref else gs - 1]
    return x


def simulate(seed: int) -> tuple[Ratings, dict[str, xr.DataArray]]:
    """Ratings on :func:`design_frame` simulated from a prior draw, and the drawn values of
    the six parameters ranked (a simulator for ``simulation_based_calibration``)."""
    rng = np.random.default_rng(seed)
    frame = design_frame()
    placeholder = read_ratings(
        frame.with_columns(pl.lit(3).alias("rating")), scale=OrdinalScale.likert(5)
    )
    # prior_draw draws the non-centred z blocks in the standard coordinates
    model = OrdinalRaters(centred=False, latent_unit=UNIT, scale_coordinate=False)
    data = model.prepare(placeholder)
    dens = model.density(data)
    x = prior_draw(model.layout(data), rng)
    vals = dens.expand(x)
    post = xr.Dataset(
        {
            k: (("chain", "draw", *dens.var_dims[k]), np.asarray(v)[None, None])
            for k, v in vals.items()
        },
        coords=dens.coords,
    )
    lp, cuts = lp_and_cuts(post, data)
    cum = 1.0 / (1.0 + np.exp(-(cuts[0, 0] - lp[0, 0][:, None])))
    y = 1 + np.sum(rng.random(lp.shape[-1])[:, None] > cum, axis=1)
    sim = data.frame.drop("rating").with_columns(pl.Series("rating", y))
    full = frame.join(
        sim.select("item", "segment", "rater", "design", "rating"),
        on=["item", "segment", "rater", "design"],
        nulls_equal=True,
    )
    r = read_ratings(full, scale=OrdinalScale.likert(5))
    truth = post.isel(chain=0, draw=0, drop=True)
    return r, {
        "length_effect": truth["length_effect"].sel(dimension="quality"),  # coarse, fine
        "severity": truth["severity"].sel(rater="r0", dimension="quality", design="coarse"),
        "discrimination": truth["discrimination"].sel(
            rater="r1", dimension="quality", design="fine"
        ),
        "sigma_residual": truth["sigma_residual"].sel(dimension="quality"),
        "system_effect": truth["system_effect"].sel(dimension="quality", system="b"),
        "cutpoints": truth["cutpoints"].sel(dimension="quality", design="coarse", cut=2),
    }


@pytest.mark.slow
def test_simulation_based_calibration():
    """Ranks among 100 draws (every 8th of 2 x 400) of 100 replicates, in 5 bins: the
    chi-square p-value of each of the seven parameter elements above 0.01, and no failed
    fit (issue 22: on the public ``simulation_based_calibration``; issue 19: the fitted
    model's priors in latent unit 2, its latent-scale coordinate, centred raters)."""
    ds = simulation_based_calibration(
        OrdinalRaters(centred=True, latent_unit=UNIT),
        simulate,
        n_replicates=N_REPLICATES,
        draws=400,
        tune=400,
        chains=2,
        thin=THIN,
        n_bins=N_BINS,
        random_seed=1000,
    )
    assert ds.attrs["n_failed"] == 0, ds.attrs.get("fit_warning")
    assert ds.sizes["parameter"] == 7 and ds.attrs["n_draws"] == 2 * 400 // THIN
    for name in ds["parameter"].values:
        p = float(ds["pvalue"].sel(parameter=name))
        counts = ds["rank_histogram"].sel(parameter=name).values.tolist()
        assert p > 0.01, f"{name}: rank histogram {counts} (chi-square p = {p:.4f})"
