"""issue 23: compare_designs from categorical fits (MACE, Dawid-Skene): accuracy and the
model-implied Cohen's kappa of a human rater against the true label per dimension x
design, posterior predictive Randolph's kappa / Krippendorff's alpha (nominal) per design,
in the layout of the ordinal comparison (part "compare").

Default tests use EM fits of tiny studies; the acceptance checks on the built-in study and
on DialSummEval (NUTS fits) are slow.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import xarray as xr
from scipy.special import expit

from raterstats import MACE, DawidSkene, read_ratings
from raterstats import schema as S
from raterstats.agreement import randolph_kappa
from raterstats.demo.run import DEMO_SCHEMES, FINE_BINARY_RULES
from raterstats.design import combine_schemes, compare_designs, design_table
from raterstats.diagnostics import agreement_replicates, ppc_agreement
from raterstats.models import Prior
from raterstats.models.latent_class import data_from_groups, prepare_latent_class
from raterstats.scales import OrdinalScale
from raterstats.simulate import clinical_qa_study

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CONTRACT = (
    "reliability", "reliability_low", "reliability_high", "p_more_reliable", "accuracy",
    "accuracy_low", "accuracy_high", "p_more_accurate", "n_categories", "kappa", "kappa_mean",
    "kappa_low", "kappa_high", "kappa_observed", "kappa_ppp", "p_kappa_higher", "alpha",
    "alpha_mean", "alpha_low", "alpha_high", "alpha_observed", "alpha_ppp", "p_alpha_higher",
)  # fmt: skip


@pytest.fixture(scope="module")
def study():
    return clinical_qa_study(n_questions=4, random_seed=2)


@pytest.fixture(scope="module")
def combined(study):
    return combine_schemes({s.name: s.apply(study.ratings) for s in DEMO_SCHEMES})


@pytest.fixture(scope="module")
def mace_em(combined):
    return MACE().fit(combined, method="em", random_seed=1)


# ------------------------------------------------------------------------ rater kind


def test_rater_is_human_is_stored_and_read_back(study):
    """issue 23: latent-class fits store which raters are human; fits saved without it
    read back as all human, ratings without rater_kind are all human."""
    d = prepare_latent_class(study.ratings.collapse("likert5_to_3"))
    assert dict(zip(d.raters, d.rater_is_human.tolist(), strict=True)) == {
        r: r != "llm-judge" for r in d.raters
    }
    g = d.data_groups()
    assert g["constant_data"]["rater_is_human"].dims == ("rater",)
    back = data_from_groups(g["constant_data"], g["observed_data"])
    np.testing.assert_array_equal(back.rater_is_human, d.rater_is_human)
    old = data_from_groups(g["constant_data"].drop_vars("rater_is_human"), g["observed_data"])
    assert old.rater_is_human.all() and old.rater_is_human.size == len(d.raters)
    plain = read_ratings(
        pl.DataFrame({"item": ["a", "b", "a", "b"], "rater": ["x", "x", "y", "y"],
                      "rating": [1, 2, 1, 1]})
    )  # fmt: skip
    assert prepare_latent_class(plain).rater_is_human.tolist() == [True, True]


# ------------------------------------------------------------------------ the layout


def test_layout_matches_the_ordinal_contract(mace_em, combined):
    """issue 23: same variables and dims as the ordinal comparison, on BASE dimensions;
    accuracy and kappa are the model's, averaged over the human raters of the cell."""
    ds = compare_designs(mace_em, n_replicates=6, random_seed=3)
    for v in (*CONTRACT, "competence", "competence_low", "competence_high"):
        assert v in ds, v
    assert list(ds["dimension"].values) == ["correctness", "relevance", "safety"]
    assert list(ds["design"].values) == ["coarse 3-point", "fine 3-point", "fine binary"]
    assert ds["p_more_reliable"].dims == ("dimension", "design", "design_b")
    assert ds["kappa"].dims == ("replicate", "dimension", "design")
    assert ds.sizes["replicate"] == 6  # an EM fit still gives n_replicates replicates
    assert ds["n_categories"].sel(dimension="correctness").values.tolist() == [3, 3, 2]
    assert "Cohen's kappa" in ds.attrs["reliability_measure"]
    # by hand from MACE's parameters: theta 1[k=t] + (1 - theta) spam[k], human raters
    post = mace_em.posterior.isel(chain=0, draw=0)
    space, des = "correctness (fine binary)", "fine binary"
    pi = post["prevalence"].sel(dimension=space).values[:2]
    sub = combined.filter(design=des, dimension=space).data
    humans = sorted(sub.filter(pl.col("rater_kind") == "human")["rater"].unique().to_list())
    acc, kap, comp = [], [], []
    for r in humans:
        th = float(post["competence"].sel(rater=r, dimension=space, design=des))
        xi = post["spam"].sel(rater=r, dimension=space).values[:2]
        conf = th * np.eye(2) + (1 - th) * xi[None, :]
        a = float(pi @ np.diag(conf))
        pe = float(pi @ (pi @ conf))
        acc.append(a), kap.append((a - pe) / (1 - pe)), comp.append(th)
    cell = ds.sel(dimension="correctness", design=des)
    assert float(cell["accuracy"]) == pytest.approx(np.mean(acc))
    assert float(cell["reliability"]) == pytest.approx(np.mean(kap))
    assert float(cell["competence"]) == pytest.approx(np.mean(comp))
    # the observed kappa is the classical statistic of the human first ratings
    r = combined.filter(rater_kind="human", dimension=space, design=des)
    direct = randolph_kappa(r.to_matrix(repeats="exclude").values, categories=[0, 1])
    assert float(cell["kappa_observed"]) == pytest.approx(direct)
    # an EM fit: degenerate intervals, said so by the health note
    np.testing.assert_allclose(ds["accuracy_low"], ds["accuracy_high"])
    assert "point estimate" in ds.attrs["uncertainty_note"]
    assert "no posterior uncertainty" in ds.attrs["uncertainty_note"]
    # readout: one line per statistic x cell with ratings; alpha is nominal here
    lines = ds.attrs["ppc_readout"].splitlines()
    assert len(lines) == 2 * 9
    assert any("Krippendorff's alpha (nominal)" in s for s in lines)
    assert not any("(ordinal)" in s for s in lines)
    t = design_table(ds)
    assert t.height == 9 and {"accuracy", "reliability", "kappa_mean"} <= set(t.columns)
    xr.testing.assert_identical(ds, compare_designs(mace_em, n_replicates=6, random_seed=3))
    only = compare_designs(mace_em, n_replicates=0)
    assert "kappa" not in only and "accuracy" in only


def test_cells_without_ratings_are_nan_and_level_map_is_refused(study):
    """issue 23: a (dimension, design) without ratings is NaN (0 categories), never a
    prior-only value; level_map is for ordinal fits only."""
    parts = {s.name: s.apply(study.ratings) for s in DEMO_SCHEMES[:2]}
    parts["fine binary"] = DEMO_SCHEMES[2].apply(study.ratings).filter(dimension="safety")
    dt = DawidSkene().fit(combine_schemes(parts), method="em", random_seed=1)
    ds = compare_designs(dt, n_replicates=4, random_seed=1)
    assert "competence" not in ds  # Dawid-Skene has no competence
    hole = ds.sel(dimension="correctness", design="fine binary")
    assert int(hole["n_categories"]) == 0
    for v in ("reliability", "accuracy", "kappa_mean", "kappa_observed", "kappa_ppp"):
        assert np.isnan(float(hole[v])), v
    assert np.isnan(float(ds["p_more_reliable"].sel(
        dimension="correctness", design="fine binary", design_b="coarse 3-point")))  # fmt: skip
    assert not np.isnan(float(ds["reliability"].sel(dimension="safety", design="fine binary")))
    assert "correctness, fine binary" not in ds.attrs["ppc_readout"]
    with pytest.raises(ValueError, match="level_map applies to ordinal fits only"):
        compare_designs(dt, level_map={1: 0})


def test_ppc_agreement_shares_the_computation(mace_em, combined):
    """issue 23: ppc_agreement and the categorical comparison use one function
    (agreement_replicates); human_only drops the LLM judge."""
    every = agreement_replicates(mace_em, n_draws=5, random_seed=4)
    ppc = ppc_agreement(mace_em, n_draws=5, random_seed=4)
    xr.testing.assert_equal(ppc["replicated"], every["replicated"])
    human = agreement_replicates(mace_em, n_draws=5, random_seed=4, human_only=True)
    r = combined.filter(dimension="safety", design="coarse 3-point")
    for rr, got in ((r, every), (r.filter(rater_kind="human"), human)):
        direct = randolph_kappa(rr.to_matrix(repeats="exclude").values, categories=[-1, 0, 1])
        obs = got["observed"].sel(statistic="randolph_kappa", dimension="safety")
        assert float(obs.sel(design="coarse 3-point")) == pytest.approx(direct)


# ------------------------------------------------------------------------ point 4


def test_kappa_not_accuracy_ranks_designs_with_different_k(study):
    """issue 23, acceptance: designs with different numbers of categories are compared on
    a chance-corrected scale. Uniform prevalence, errors uniform over the other labels:
    with the same accuracy ``a`` a 3-point design has kappa ``(a - 1/3) / (2/3)`` and a
    binary one ``(a - 1/2) / (1/2)``, different kappas. With the binary design's raters
    even 0.02 MORE accurate in every draw (a in [0.7, 0.9]), the 3-point design is more
    reliable in every draw: kappa, not accuracy, drives p_more_reliable."""
    parts = {s.name: s.apply(study.ratings) for s in (DEMO_SCHEMES[0], DEMO_SCHEMES[2])}
    dt = DawidSkene().fit(combine_schemes(parts), method="em", random_seed=1)
    post = dt.posterior.to_dataset()
    n = 40
    a = np.clip(0.8 + 0.03 * np.random.default_rng(0).standard_normal(n), 0.7, 0.9)
    conf = np.zeros((1, n, *post["confusion"].shape[2:]))
    prev = np.zeros((1, n, *post["prevalence"].shape[2:]))
    for d, k in enumerate(dt.constant_data["n_categories"].values):
        acc = (a + (0.02 if k == 2 else 0.0))[:, None, None]
        m = (1 - acc) / (k - 1) * (1 - np.eye(k)) + acc * np.eye(k)
        conf[0, :, :, d, :, :k, :k] = m[:, None, None]
        prev[0, :, d, :k] = 1 / k
    new = post.isel(draw=[0] * n).assign_coords(draw=np.arange(n))
    new["confusion"] = (new["confusion"].dims, conf)
    new["prevalence"] = (new["prevalence"].dims, prev)
    dt["posterior"] = xr.DataTree(new)
    ds = compare_designs(dt, n_replicates=0)
    cell = ds.sel(dimension="correctness")
    coarse, binary = "coarse 3-point", "fine binary"
    assert float(cell["accuracy"].sel(design=coarse)) == pytest.approx(a.mean())
    assert float(cell["accuracy"].sel(design=binary)) == pytest.approx(a.mean() + 0.02)
    kap = cell["reliability"]
    assert float(kap.sel(design=coarse)) == pytest.approx((a.mean() - 1 / 3) / (2 / 3))
    assert float(kap.sel(design=binary)) == pytest.approx((a.mean() + 0.02 - 1 / 2) / (1 / 2))
    assert float(cell["p_more_accurate"].sel(design=binary, design_b=coarse)) == 1.0
    assert float(cell["p_more_reliable"].sel(design=coarse, design_b=binary)) == 1.0
    assert float(cell["p_more_reliable"].sel(design=binary, design_b=coarse)) == 0.0


# ------------------------------------------------------------------------ point 3


def test_misspecified_label_prior_is_flagged(study):
    """issue 23, acceptance: a fit whose label prior puts nearly all mass on "disagree"
    (the true labels are mostly "agree") cannot reproduce the observed agreement: the
    predictive check puts the observed Randolph's kappa outside the replicates' interval
    (ppp extreme) and says so in the readout; the same fit with the default prior does."""
    r = clinical_qa_study(n_questions=10, random_seed=2).ratings
    r3 = DEMO_SCHEMES[0].apply(r)
    bad = MACE(priors={"prevalence": Prior("Dirichlet", a=[2000.0, 1.0, 1.0])})
    ds = compare_designs(bad.fit(r3, method="em", random_seed=1), n_replicates=50)
    ppp = ds["kappa_ppp"]
    assert (ppp <= 0.05).all(), ppp.values
    assert (ds["kappa_observed"] > ds["kappa_high"]).all()
    assert ds.attrs["ppc_readout"].count("under-predicts agreement: observed Randolph's") == 3
    good = compare_designs(MACE().fit(r3, method="em", random_seed=1), n_replicates=50)
    assert ((good["kappa_ppp"] > 0.05) & (good["kappa_ppp"] < 0.95)).all()


# ------------------------------------------------------------------------ slow: points 1-3

COLLAPSE = np.array([0, 0, 1, 2, 2])  # 5-point level -> code of the 3-point collapse


def _level_probs(lp: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    cum = expit(cuts[None, :] - lp[:, None])
    cum = np.concatenate([np.zeros((lp.size, 1)), cum, np.ones((lp.size, 1))], axis=1)
    return np.diff(cum, axis=1)


def true_accuracy(sim) -> dict[tuple[str, str], float]:
    """The true accuracy of each (design, dimension) of the demo schemes, exactly from the
    simulation's ordered-logistic probabilities (see test_accuracy_covers_the_truth)."""
    tr, data = sim.truth, sim.ratings.data
    d = data.filter((pl.col(S.RATER_KIND) == "human") & ~pl.col(S.REPEAT))
    items = [str(x) for x in tr["item"].values]
    ipos = {it: k for k, it in enumerate(items)}
    rpos = {str(x): k for k, x in enumerate(tr["rater"].values)}
    upos = {str(u): k for k, u in enumerate(tr["unit"].values)}
    human = np.array([str(x) != "llm-judge" for x in tr["rater"].values])
    eta, w, z = tr["eta"].values, tr["sentence_effect"].values, tr["z_length"].values
    disc, sev, beta = (tr[v].values for v in ("discrimination", "severity", "length_effect"))
    cuts = tr["cutpoints"].values
    out = {}
    for g, design in enumerate(("coarse", "fine")):
        for di, dim in enumerate(str(x) for x in tr["dimension"].values):
            lam0 = np.exp(np.log(disc[human, di, g]).mean())
            sev0, b0 = sev[human, di, g].mean(), beta[human, di, g].mean()
            sub = d.filter((pl.col(S.DESIGN) == design) & (pl.col(S.DIMENSION) == dim))
            pairs = sub.select(S.RATER, S.ITEM, S.SEGMENT).unique()
            acc3, accb = [], []
            for (rater,), grp in pairs.group_by(S.RATER):
                j = rpos[str(rater)]
                it = np.array([ipos[x] for x in grp[S.ITEM]])
                lat = eta[it, di].copy()
                if g == 1:
                    segs = grp[S.SEGMENT].to_list()
                    lat += np.array(
                        [w[upos[S.unit_id(items[i], s)], di] for i, s in zip(it, segs, strict=True)]
                    )
                lp = disc[j, di, g] * lat - sev[j, di, g] + beta[j, di, g] * z[it]
                truth3 = COLLAPSE[np.searchsorted(cuts[di, g], lam0 * lat - sev0 + b0 * z[it])]
                p5 = _level_probs(lp, cuts[di, g])
                p3 = np.stack([p5[:, :2].sum(1), p5[:, 2], p5[:, 3:].sum(1)], 1)
                acc3.append(p3[np.arange(it.size), truth3].mean())
                if g == 1:
                    neg = FINE_BINARY_RULES[dim] == "any_negative"
                    hit_true = truth3 == (0 if neg else 2)  # the sentence triggers the rule
                    p_hit = p3[:, 0] if neg else p3[:, 2]
                    per = pl.DataFrame({"i": it, "t": hit_true, "q": np.log1p(-p_hit)})
                    per = per.group_by("i").agg(pl.col("t").any(), pl.col("q").sum())
                    p_any = 1 - np.exp(per["q"].to_numpy())
                    accb.append(np.where(per["t"].to_numpy(), p_any, 1 - p_any).mean())
            out[("coarse 3-point" if g == 0 else "fine 3-point", dim)] = float(np.mean(acc3))
            if g == 1:
                out[("fine binary", dim)] = float(np.mean(accb))
    return out


def _fit_builtin(gain: float, model=None, *, humans: bool = False):
    """The built-in study under the demo's three schemes, fitted by NUTS (2 x 1000)."""
    sim = clinical_qa_study(fine_discrimination_gain=gain)
    r = sim.ratings.filter(rater_kind="human") if humans else sim.ratings
    both = combine_schemes({s.name: s.apply(r) for s in DEMO_SCHEMES})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dt = (model or MACE()).fit(
            both, draws=1000, tune=1000, chains=2, random_seed=1, progress=False
        )
    return sim, dt


@pytest.fixture(scope="module")
def builtin():
    sim, dt = _fit_builtin(0.15)
    return sim, dt, compare_designs(dt, n_replicates=100, ci_prob=0.9, random_seed=1)


@pytest.fixture(scope="module")
def builtin_ds():
    """Dawid-Skene on the physicians' ratings (the design comparison is of the human
    panel; the LLM judge's confusion in the sentence-level cells is bimodal across chains,
    R-hat 1.23, and would leave the whole fit unconverged)."""
    sim, dt = _fit_builtin(0.15, DawidSkene(), humans=True)
    return sim, dt, compare_designs(dt, n_replicates=100, ci_prob=0.9, random_seed=1)


def _coverage_table(ds: xr.Dataset, truth: dict[tuple[str, str], float]) -> list[str]:
    lines = []
    for (des, dim), t in truth.items():
        c = ds.sel(design=des, dimension=dim)
        lines.append(
            f"{des} / {dim}: true {t:.3f}, accuracy {float(c['accuracy']):.3f} "
            f"[{float(c['accuracy_low']):.3f}, {float(c['accuracy_high']):.3f}]"
        )
    return lines


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="blocked: latent-class models are misspecified for the ordinal-generated built-in "
    "study (a discrete true label with errors independent given it, where the data have a "
    "continuous latent quality whose nearness to a cut-point makes raters err together): "
    "MACE covers the true accuracy in 2 of 9 design x dimension cells, Dawid-Skene in 4 of 9; "
    "both over-estimate the fine 3-point design's accuracy by 0.03-0.04",
)
@pytest.mark.parametrize("fixture", ["builtin", "builtin_ds"])
def test_accuracy_covers_the_truth(fixture, request):
    """issue 23, acceptance 1: on the built-in study (simulated from the ORDINAL model),
    each design's accuracy interval covers the true accuracy.

    The truth, from the simulation's parameters: a unit's true label is the label that the
    panel's typical physician would give without the logistic noise, i.e. the category of
    ``lambda0 * latent - delta0 + beta0 * z(length)`` under the design's cut-points
    (``lambda0``: geometric mean of the physicians' discrimination in that dimension x
    design, ``delta0`` / ``beta0``: their mean severity and length effect; the latent is
    the answer's quality, plus the sentence's deviation for fine ratings), collapsed to 3
    points, and for "fine binary" the dimension's rule (any sentence negative /
    positive) applied to those sentence labels. That is what a latent-class model can
    identify from ratings alone: biases the whole panel shares are part of the consensus.
    A physician's accuracy is the mean over the units they rated of P(their collapsed /
    aggregated rating = true label), exactly from the ordered-logistic probabilities
    (sentences independent given the answer); the design's is the mean over physicians.
    """
    sim, _, ds = request.getfixturevalue(fixture)
    truth = true_accuracy(sim)
    lines = _coverage_table(ds, truth)
    covered = [
        float(ds["accuracy_low"].sel(design=des, dimension=dim))
        <= t
        <= float(ds["accuracy_high"].sel(design=des, dimension=dim))
        for (des, dim), t in truth.items()
    ]
    assert all(covered), "\n".join(lines)


@pytest.mark.slow
def test_fine_more_accurate_follows_the_planted_gain():
    """issue 23, acceptance 2: P(fine 3-point more accurate than coarse 3-point) follows
    the planted discrimination gain of fine ratings. The default gain (0.15) leaves the
    true accuracies of the two designs within 0.05 of each other (fine sentence units are
    harder to label than answers), so the test plants +1.0, under which the true
    accuracy (true_accuracy) of fine 3-point exceeds coarse in every dimension, and -1.0,
    under which it is below in every dimension: P > 0.9 and P < 0.1."""
    for gain, fine_better in ((1.0, True), (-1.0, False)):
        sim, dt = _fit_builtin(gain)
        truth = true_accuracy(sim)
        ds = compare_designs(dt, n_replicates=0)
        p = ds["p_more_accurate"].sel(design="fine 3-point", design_b="coarse 3-point")
        for dim in ds["dimension"].values:
            t_f, t_c = truth[("fine 3-point", dim)], truth[("coarse 3-point", dim)]
            assert (t_f > t_c) == fine_better, (gain, dim, t_f, t_c)
            got = float(p.sel(dimension=dim))
            assert (got > 0.9) if fine_better else (got < 0.1), (gain, dim, got)


def _ppc_check(ds: xr.Dataset, designs: list[str]) -> None:
    """ppp of Randolph's kappa not extreme (between 0.025 and 0.975) in every dimension of
    ``designs``, and the readout says "reproduces" exactly where the observed value is
    inside the replicates' interval."""
    sub = ds.sel(design=designs)
    table = sub[["kappa_observed", "kappa_low", "kappa_high", "kappa_ppp"]]
    assert ((sub["kappa_ppp"] > 0.025) & (sub["kappa_ppp"] < 0.975)).all(), table
    inside = (sub["kappa_observed"] >= sub["kappa_low"]) & (
        sub["kappa_observed"] <= sub["kappa_high"]
    )
    lines = [s for s in ds.attrs["ppc_readout"].splitlines() if "Randolph's kappa" in s]
    checked = 0
    for line in lines:
        dim, des = line.split(": ", 1)[0].split(", ", 1)
        if des in designs:
            ok = bool(inside.sel(dimension=dim, design=des))
            assert ("the model reproduces" in line) == ok, (line, table)
            checked += 1
    assert checked == sub.sizes["dimension"] * len(designs)


@pytest.mark.slow
def test_predictive_kappa_covers_the_observed_builtin_dawid_skene(builtin_ds):
    """issue 23, acceptance 3: on the built-in study, Dawid-Skene's posterior predictive
    Randolph's kappa is consistent with the observed one in every design and dimension
    (ppp not extreme; the readout says "reproduces" exactly where the observed value is
    inside the replicates' 90% interval)."""
    _ppc_check(builtin_ds[2], ["coarse 3-point", "fine 3-point", "fine binary"])


@pytest.mark.slow
def test_predictive_kappa_of_mace_builtin(builtin):
    """issue 23, acceptance 3 with MACE: consistent for the answer-level designs (coarse
    3-point, fine binary); for the sentence-level fine 3-point design MACE's single
    competence per rater cannot give the adjacent-category errors of sentence ratings and
    under-predicts their agreement, and the check says so (ppp <= 0.05 in at least two of
    the three dimensions, the readout "under-predicts" there)."""
    ds = builtin[2]
    _ppc_check(ds, ["coarse 3-point", "fine binary"])
    fine = ds.sel(design="fine 3-point")
    low = [
        str(d)
        for d in fine["dimension"].values
        if float(fine["kappa_ppp"].sel(dimension=d)) <= 0.05
    ]
    assert len(low) >= 2, fine[["kappa_observed", "kappa_low", "kappa_high", "kappa_ppp"]]
    lines = [s for s in ds.attrs["ppc_readout"].splitlines() if "Randolph's kappa" in s]
    for dim in low:
        line = next(x for x in lines if x.startswith(f"{dim}, fine 3-point:"))
        assert "under-predicts" in line or "outside" in line, line


def _dialsummeval_fit(model):
    path = SHARED / "dialsummeval_campus" / "data.csv"
    if not path.is_file():
        pytest.skip(f"real data set dialsummeval_campus not found at {path} (no ../shared/data)")
    r = read_ratings(
        path,
        columns={"rater": "annotator", "rating": "label", "question": "document"},
        scale=OrdinalScale.likert(5),
    ).collapse("likert5_to_3")
    # draws set by the fit's checks (the default checkpoints): Dawid-Skene here failed them
    # at a fixed 1,000 draws (4 divergences, R-hat 1.030) and passes at 3,000
    dt = model.fit(r, tune=1000, chains=4, random_seed=1, progress=False)
    assert dt.attrs["health_ok"], dt.attrs["health"]
    return compare_designs(dt, n_replicates=100, ci_prob=0.9, random_seed=1)


def _dims(ds: xr.Dataset, dims: list[str]) -> xr.Dataset:
    out = ds.sel(dimension=dims)
    out.attrs = dict(ds.attrs)  # a copy: sel shares the attrs with ds
    keep = [s for s in ds.attrs["ppc_readout"].splitlines() if s.split(",", 1)[0] in dims]
    out.attrs["ppc_readout"] = "\n".join(keep)
    return out


@pytest.mark.slow
def test_predictive_kappa_covers_the_observed_dialsummeval_dawid_skene():
    """issue 23, acceptance 3: DialSummEval campus experts (3 per summary, 1-5 collapsed to
    3 points; one design), Dawid-Skene: the predictive Randolph's kappa covers the observed
    one in all four dimensions. Skipped when ../shared/data is absent."""
    ds = _dialsummeval_fit(DawidSkene())
    _ppc_check(ds, ["default"])


@pytest.mark.slow
def test_predictive_kappa_of_mace_dialsummeval():
    """issue 23, acceptance 3 with MACE on DialSummEval: consistent in coherence,
    consistency and fluency; on relevance MACE under-predicts the experts' agreement
    (observed 0.26 above the replicates' 90% interval, ppp about 0.02) and the check
    flags it. Skipped when ../shared/data is absent."""
    ds = _dialsummeval_fit(MACE())
    _ppc_check(_dims(ds, ["coherence", "consistency", "fluency"]), ["default"])
    rel = ds.sel(dimension="relevance", design="default")
    assert float(rel["kappa_ppp"]) <= 0.05, rel
    line = next(
        x for x in ds.attrs["ppc_readout"].splitlines()
        if x.startswith("relevance, default:") and "Randolph's kappa" in x
    )  # fmt: skip
    assert "the model reproduces" not in line, line
