"""Simulation-based calibration (Talts et al. 2018) of OrdinalRaters on a small design.

Parameters are drawn from the model's priors, ratings simulated from them, the model fitted
by NUTS, and the rank of each true parameter among the posterior draws recorded; with a
correct sampler and model the ranks are uniform (chi-square test per parameter).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import xarray as xr
from scipy import stats

from raterstats import OrdinalRaters, OrdinalScale, read_ratings
from raterstats.models.ordinal import Block, lp_and_cuts

N_REPLICATES = 100
N_BINS = 5
THIN_TO = 99  # posterior draws kept per replicate (ranks 0..99)


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
        elif b == Block.CUTS:  # K - 1 ordered N(0, 3) cut-points per dimension x design
            k1 = layout.n_levels - 1
            c = np.sort(rng.normal(0.0, 3.0, (hi - lo) // k1 * k1).reshape(-1, k1), axis=1)
            x[lo:hi] = np.concatenate([c[:, :1], np.log(np.diff(c, axis=1))], axis=1).ravel()
        else:  # standard normals and N(0, 1) effects
            x[lo:hi] = rng.normal(0.0, 1.0, hi - lo)
    # the sentence-scale block holds log tau + m[d, gs] (a shear; see the kernels)
    gs, ref = layout.sentence_design, layout.reference
    tau, lm_block = layout.block(Block.LOG_TAU), layout.block(Block.LM)
    if gs >= 0 and tau.stop > tau.start:
        lm = x[lm_block].reshape(layout.n_dim, layout.n_design - 1)
        x[tau] += lm[:, gs if gs < ref else gs - 1]
    return x


def one_replicate(seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    frame = design_frame()
    placeholder = read_ratings(
        frame.with_columns(pl.lit(3).alias("rating")), scale=OrdinalScale.likert(5)
    )
    model = OrdinalRaters(centred=False)  # prior_draw draws the non-centred z blocks
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
    dt = model.fit(
        r, draws=400, tune=400, chains=2, random_seed=seed, progress=False, log_likelihood=False
    )
    p = dt["posterior"].to_dataset().stack(sample=("chain", "draw"))
    idx = np.linspace(0, p.sizes["sample"] - 1, THIN_TO).astype(int)
    truth = {
        "length_effect[fine]": vals["length_effect"][0, 1],
        "length_effect[coarse]": vals["length_effect"][0, 0],
        "severity[r0, coarse]": vals["severity"][0, 0, 0],
        "discrimination[r1, fine]": vals["discrimination"][1, 0, 1],
        "sigma_residual": vals["sigma_residual"][0],
        "cutpoints[2]": vals["cutpoints"][0, 0, 1],
    }
    draws = {
        "length_effect[fine]": p["length_effect"].sel(dimension="quality", design="fine"),
        "length_effect[coarse]": p["length_effect"].sel(dimension="quality", design="coarse"),
        "severity[r0, coarse]": p["severity"].sel(rater="r0", dimension="quality", design="coarse"),
        "discrimination[r1, fine]": p["discrimination"].sel(
            rater="r1", dimension="quality", design="fine"
        ),
        "sigma_residual": p["sigma_residual"].sel(dimension="quality"),
        "cutpoints[2]": p["cutpoints"].sel(dimension="quality", design="coarse", cut=2),
    }
    return {k: float(np.sum(draws[k].values[idx] < truth[k])) for k in truth}


@pytest.mark.slow
def test_simulation_based_calibration():
    ranks: dict[str, list[float]] = {}
    for rep in range(N_REPLICATES):
        for k, v in one_replicate(1000 + rep).items():
            ranks.setdefault(k, []).append(v)
    for name, rs in ranks.items():
        counts = np.histogram(rs, bins=N_BINS, range=(0, THIN_TO + 1))[0]
        p = stats.chisquare(counts).pvalue
        assert p > 0.01, f"{name}: rank histogram {counts.tolist()} (chi-square p = {p:.4f})"
