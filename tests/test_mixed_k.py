"""issue 23: designs with different label sets in one latent-class fit -- the simulator
:func:`raterstats.simulate_schemes.scheme_study` (hierarchical MACE, a 3-point coarse design
beside a binary fine design), the fits of MACE and Dawid-Skene on such data, and the
recovery of per-design competence (slow)."""

from __future__ import annotations

import time

import numpy as np
import polars as pl
import pytest

from raterstats import MACE, DawidSkene, rater_summary, read_ratings
from raterstats.design import combine_schemes
from raterstats.simulate_schemes import CLINICAL_SCHEMES, scheme_study


def per_design_competence(dt, truth):
    """Posterior draws ``(S, n_cells)`` and truth ``(n_cells,)`` of each rated (label
    space, design) cell's per-design competence: the mean competence over the human raters
    who rated in the cell; and the same per (rater, cell) pair."""
    comp = dt.posterior["competence"].stack(s=("chain", "draw")).transpose("s", ...)
    comp = comp.sel(rater=truth["rater"], dimension=truth["dimension"], design=truth["design"])
    rated = (truth["n_ratings"] > 0) & (truth["rater_kind"] == "human")
    w = rated.values.astype(float)  # (rater, dimension, design)
    cells = w.sum(axis=0) > 0
    draws = (comp.values * w).sum(axis=1) / np.maximum(w.sum(axis=0), 1)
    cell_draws, cell_truth = draws[:, cells], truth["panel_competence"].values[cells]
    pair_draws, pair_truth = comp.values[:, rated.values], truth["competence"].values[rated.values]
    return (cell_draws, cell_truth), (pair_draws, pair_truth)


def covered(draws: np.ndarray, truth: np.ndarray, prob: float = 0.9) -> np.ndarray:
    lo, hi = np.quantile(draws, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
    return (truth >= lo) & (truth <= hi)


# ------------------------------------------------------------------ the simulator


def test_scheme_study_layout_ids_and_truth():
    s = scheme_study(n_questions=5, random_seed=4)
    r, t = s.ratings, s.truth
    assert r.designs == ("coarse 3-point", "fine binary")
    assert r.dimensions == (
        "correctness",
        "correctness (fine binary)",
        "relevance",
        "relevance (fine binary)",
        "safety",
        "safety (fine binary)",
    )
    assert [len(r.scale_for(d).levels) for d in r.dimensions] == [3, 2] * 3
    # 15 answers x 3 raters x 3 dimensions x 2 schemes
    assert r.n_ratings == 15 * 3 * 3 * 2
    data = r.data
    assert set(data["system"].unique()) == {"physician", "llm-a", "llm-b"}
    assert data.group_by("item").agg(pl.col("rater").n_unique())["rater"].to_list() == [3] * 15
    base = dict(data.select("dimension", "base_dimension").unique().iter_rows())
    assert base["safety (fine binary)"] == "safety" and base["safety"] == "safety"
    assert set(data["rater_kind"].unique()) == {"human"}
    # each label space is rated in one design only: the other cells are empty
    assert list(t["dimension"].values) == list(r.dimensions)
    assert list(t["base_dimension"].values) == [
        d for d in ("correctness", "relevance", "safety") for _ in (0, 1)
    ]
    n_cell = t["n_ratings"].sum("rater")
    assert (n_cell.sel(dimension="correctness", design="fine binary") == 0).item()
    assert np.isnan(t["competence"].sel(dimension="correctness", design="fine binary")).all()
    assert np.isfinite(t["panel_competence"].where(n_cell > 0)).sum() == 6
    # the truth matches the ratings it made: each cell's count, and the labels' range
    counts = data.group_by("rater", "dimension", "design").len()
    for rater, dim, design, n in counts.iter_rows():
        assert t["n_ratings"].sel(rater=rater, dimension=dim, design=design).item() == n
    assert set(np.unique(t["true_label"].sel(dimension="correctness (fine binary)"))) <= {0, 1}
    # competence in the simulation's own parametrisation
    eta = t["competence_cell_mean"] + t["rater_effect"] + t["cell_effect"]
    np.testing.assert_allclose(
        1 / (1 + np.exp(-eta.transpose(*t["competence"].dims))), t["competence"]
    )
    assert (t["kappa"] < t["accuracy"]).where(n_cell > 0, True).all()


def test_scheme_study_is_deterministic_and_seeded():
    a = scheme_study(n_questions=4, random_seed=9)
    b = scheme_study(n_questions=4, random_seed=9)
    c = scheme_study(n_questions=4, random_seed=10)
    assert a.ratings.data.equals(b.ratings.data)
    assert a.truth.equals(b.truth)
    assert not a.ratings.data["rating"].equals(c.ratings.data["rating"])


def test_scheme_study_is_the_combine_schemes_layout():
    """Per-scheme tables read on their own and stacked by combine_schemes give the same
    table."""
    s = scheme_study(n_questions=4, random_seed=2, schemes=CLINICAL_SCHEMES)
    r = s.ratings
    parts = {}
    for g in r.designs:
        part = r.data.filter(pl.col("design") == g)
        dims = part["dimension"].unique().to_list()
        frame = part.select(
            "item",
            "segment",
            "rater",
            pl.col("base_dimension").alias("dimension"),
            "rating",
            "system",
            "question",
            "rater_kind",
        ).with_columns(pl.col("rating").cast(pl.String))
        scales = {
            part.filter(pl.col("dimension") == d)["base_dimension"][0]: r.scale_for(d) for d in dims
        }
        parts[g] = read_ratings(frame, scale=scales, design=g)
    both = combine_schemes(parts)
    assert both.designs == r.designs and both.dimensions == r.dimensions
    key = ["item", "segment", "rater", "dimension", "design"]
    cols = [*key, "code", "base_dimension", "system"]
    assert (
        both.data.select(cols)
        .sort(key, nulls_last=True)
        .equals(r.data.select(cols).sort(key, nulls_last=True))
    )
    # the sentence-level scheme rates sentences, the answer-level ones answers
    seg = r.data.group_by("design").agg(pl.col("segment").is_null().all()).sort("design")
    assert dict(seg.iter_rows()) == {
        "coarse 3-point": True,
        "fine 3-point": False,
        "fine binary": True,
    }
    units = s.truth["unit_segment"].values
    assert (units != "").any() and (units == "").any()


def test_scheme_study_llm_judges_and_bad_input():
    s = scheme_study(n_questions=3, random_seed=1, n_llm_judges=1)
    data = s.ratings.data
    assert set(data.filter(pl.col("rater_kind") == "llm")["rater"].unique()) == {"llm-judge"}
    assert data.filter(pl.col("rater") == "llm-judge")["item"].n_unique() == 9
    assert s.truth["rater_kind"].sel(rater="llm-judge").item() == "llm"
    with pytest.raises(ValueError, match=r"n_categories must be an integer >= 2.*level must"):
        scheme_study(schemes={"a": (1, "answer"), "b": (2, "paragraph")})
    with pytest.raises(ValueError, match=r"raters_per_answer.*design_gain names schemes"):
        scheme_study(raters_per_answer=9, design_gain={"nope": 1.0})
    with pytest.raises(ValueError, match=r"prevalence\[2\]"):
        scheme_study(prevalence={2: (0.5, 0.6)})


# ------------------------------------------------------------------ fits of mixed-K data


@pytest.mark.parametrize("gain", [1.0, -1.0])
def test_em_fit_recovers_the_sign_of_the_design_gain(gain):
    s = scheme_study(n_questions=60, random_seed=11, design_gain=gain)
    dt = MACE().fit(s.ratings, method="em", random_seed=1)
    comp = dt.posterior["competence"].isel(chain=0, draw=0)
    n = s.truth["n_ratings"].sum("rater")
    per_design = comp.where(n > 0).mean(("rater", "dimension"))
    diff = float(per_design.sel(design="fine binary") - per_design.sel(design="coarse 3-point"))
    assert np.sign(diff) == np.sign(gain)
    truth = s.truth["panel_competence"].mean("dimension")
    assert np.sign(
        float(truth.sel(design="fine binary") - truth.sel(design="coarse 3-point"))
    ) == np.sign(gain)


@pytest.mark.parametrize(
    "model",
    [
        MACE(),
        MACE(hierarchical=False),
        DawidSkene(),
        DawidSkene(pooling="pooled"),
        DawidSkene(pooling="partial"),
        DawidSkene(pooling="one_coin"),
    ],
    ids=["mace", "mace-flat", "ds", "ds-pooled", "ds-partial", "ds-one-coin"],
)
def test_em_fits_of_mixed_k_data_keep_each_label_space_on_its_own_categories(model):
    s = scheme_study(n_questions=10, random_seed=3)
    dt = model.fit(s.ratings, method="em", random_seed=1)
    post = dt.posterior
    if "confusion" in post:
        conf = post["confusion"].isel(chain=0, draw=0)
        for dim, k in zip(s.truth["dimension"].values, s.truth["n_categories"].values, strict=True):
            rows = conf.sel(dimension=dim).isel(true=slice(0, k))
            np.testing.assert_allclose(rows.isel(rated=slice(0, k)).sum("rated"), 1.0, atol=1e-9)
            assert (rows.isel(rated=slice(k, None)) == 0).all()
    else:
        spam = post["spam"].isel(chain=0, draw=0).sel(dimension="safety (fine binary)")
        np.testing.assert_allclose(spam.isel(category=slice(0, 2)).sum("category"), 1.0)
    prev = post["prevalence"].isel(chain=0, draw=0).sel(dimension="relevance (fine binary)")
    assert float(prev.isel(category=2)) == 0.0


def test_rater_summary_marks_the_prior_only_cells():
    s = scheme_study(n_questions=6, random_seed=3)
    dt = MACE().fit(s.ratings, method="em", random_seed=1)
    rs = rater_summary(dt)
    rated = rs["cell_rated"]
    assert rated.dims == ("dimension", "design")
    assert not rated.sel(dimension="correctness", design="fine binary")
    assert rated.sel(dimension="correctness", design="coarse 3-point")
    empty = rs["competence_mean"].sel(dimension="correctness", design="fine binary")
    assert empty.isnull().all()
    assert rs["typical_competence_mean"].where(~rated).isnull().all()
    assert rs["competence_mean"].where(rated, 0.5).notnull().all()
    assert "prior only" in rs.attrs["prior_only_cells"]


def test_short_nuts_fits_of_mixed_k_data():
    """MACE (compiled density) and partially pooled Dawid-Skene (the PyMC model: the
    compiled density needs one K) sample mixed-K data; a binary label space's confusion
    rows sum to 1 over its own two categories."""
    s = scheme_study(n_questions=6, random_seed=5)
    kw = {"method": "nuts", "draws": 40, "tune": 40, "chains": 1, "progress": False}
    for model in (
        MACE(),
        MACE(hierarchical=False),
        DawidSkene(pooling="partial"),  # refused mixed K before issue 23
    ):
        dt = model.fit(s.ratings, random_seed=2, **kw)
        assert np.isfinite(dt.posterior["prevalence"]).all()
        assert (
            dt.posterior["prevalence"].sel(dimension="safety (fine binary)", category=2) == 0
        ).all()
        if "confusion" in dt.posterior:
            conf = dt.posterior["confusion"].sel(dimension="correctness (fine binary)")
            np.testing.assert_allclose(
                conf.isel(true=slice(0, 2), rated=slice(0, 2)).sum("rated"), 1.0, atol=1e-6
            )


# ------------------------------------------------------------------ recovery (slow)


@pytest.mark.slow
def test_mixed_k_fit_recovers_per_design_competence(record_property):
    """20 replicates of the default scheme study (3-point coarse, binary fine: 40 questions
    x 3 systems, 3 of 6 raters per answer) fitted by hierarchical MACE with NUTS at the
    default settings (4 chains x 1000 draws, 500 tuning steps). Per-design competence:
    the mean competence over the human raters who rated in a (label space, design) cell
    that has ratings (6 cells per replicate); its 90% equal-tailed interval covers the
    simulation's value in 80-97% of the 120 (replicate, cell) pairs; the same holds for
    each rater's competence per cell (720 pairs)."""
    cell_hits, pair_hits, healthy, secs = [], [], 0, []
    for rep in range(20):
        s = scheme_study(random_seed=1000 + rep)
        t0 = time.perf_counter()
        dt = MACE().fit(s.ratings, random_seed=rep, progress=False)
        secs.append(time.perf_counter() - t0)
        healthy += int(dt.attrs["health_ok"])
        (cd, ct), (pd_, pt_) = per_design_competence(dt, s.truth)
        cell_hits.append(covered(cd, ct))
        pair_hits.append(covered(pd_, pt_))
    cell_cov = float(np.mean(np.concatenate(cell_hits)))
    pair_cov = float(np.mean(np.concatenate(pair_hits)))
    summary = (
        f"per-design coverage {cell_cov:.3f} (n={np.concatenate(cell_hits).size}), per rater x "
        f"cell {pair_cov:.3f} (n={np.concatenate(pair_hits).size}); healthy fits {healthy}/20; "
        f"fit time median {np.median(secs):.1f} s, total {np.sum(secs):.0f} s"
    )
    print(summary)
    record_property("summary", summary)
    assert 0.80 <= cell_cov <= 0.97, summary
    assert 0.80 <= pair_cov <= 0.97, summary
    # non-centred by default with empty cells: 20 of 20 fits passed their checks (centred,
    # before that default, 0 of 20)
    assert healthy >= 18, summary


def test_mace_samples_non_centred_when_a_dimension_design_cell_has_no_rating():
    """issue 23: in a fit of schemes with different label sets, the (label space, design)
    cells that no rating falls in have prior-only effects, a funnel in the centred form
    (on the default scheme study: 85 leapfrog steps per draw and 142 divergences centred,
    15 and at most 1 non-centred), so the default is non-centred however many ratings the
    rated cells hold; an explicit ``centred`` still wins (``"raters"``: the rater effects
    alone, which every rating of the rater identifies; not the default, see the card)."""
    from raterstats.models.latent_class.data import prepare_latent_class

    s = scheme_study(random_seed=5)
    data = prepare_latent_class(s.ratings)
    n = np.bincount(data.cell, minlength=data.n_cells)
    assert np.median(n[n > 0]) >= 20  # the old rule alone would have chosen centred
    assert MACE().is_centred(data) == (False, False)  # (rater effects, cell effects)
    assert MACE(centred=True).is_centred(data) == (True, True)
    assert MACE(centred="raters").is_centred(data) == (True, False)
    # without empty cells the rule is unchanged: one scheme, every cell rated
    one = prepare_latent_class(s.ratings.filter(design="coarse 3-point"))
    m = np.bincount(one.cell, minlength=one.n_cells)
    both = bool(np.median(m[m > 0]) >= 20)
    assert MACE().is_centred(one) == (both, both)
