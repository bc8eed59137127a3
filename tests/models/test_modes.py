"""Mode checks of sampled latent-class fits (issue 19): chains that leave the mode of the EM
estimate they started from, chains whose log density sits far below the others, besides
permuted labellings; for every LatentClassModel, fresh or reloaded.

The fast tests build multi-chain fits from an EM estimate (each chain's draws the estimate,
one chain changed into another mode); the slow ones sample."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import xarray as xr

from raterstats import MACE, DawidSkene, diagnose, fit_health
from raterstats.models.latent_class import mode_report, mode_table
from raterstats.models.latent_class.data import prepare_latent_class
from raterstats.models.latent_class.modes import (
    CONFIDENT_PROB,
    EM_DISAGREE_MAX,
    EM_GROUP,
    em_start_group,
)
from raterstats.simulate import hard_crowd

N_CHAINS, N_DRAWS = 3, 40


@pytest.fixture(scope="module")
def crowd():
    return hard_crowd(
        n_items=200, n_raters=30, n_classes=3, class_imbalance=1.5, accuracy=0.8, random_seed=11
    )


def em_start(model, ratings) -> tuple[xr.DataTree, xr.Dataset, dict[str, np.ndarray]]:
    """The EM fit the chains start from, its point estimate (one draw) and that point as
    the start values of a NUTS fit."""
    em = model.fit(ratings, method="em", random_seed=1)
    point = em["posterior"].to_dataset().isel(chain=0, draw=0, drop=True)
    return em, point, {str(k): np.asarray(v.values) for k, v in point.items()}


def chains_from_em(
    model, ratings, change: Callable[[xr.Dataset], xr.Dataset] | None = None, lp_shift=0.0
) -> xr.DataTree:
    """A fit of N_CHAINS chains whose draws are the EM estimate (chain 2 changed by
    ``change``), with the EM start stored and lp scattered as a sampler's would be."""
    em, point, start = em_start(model, ratings)
    draws = point.expand_dims(draw=np.arange(N_DRAWS))
    chains = [draws] * (N_CHAINS - 1) + [draws if change is None else change(draws)]
    post = xr.concat(chains, dim="chain").assign_coords(chain=np.arange(N_CHAINS))
    post = post.transpose("chain", "draw", ...)
    rng = np.random.default_rng(0)
    lp = rng.normal(-1000.0, 5.0, (N_CHAINS, N_DRAWS))
    lp[-1] -= lp_shift
    fit = xr.DataTree()
    for name in ("observed_data", "constant_data"):
        fit[name] = em[name].copy()
    fit["posterior"] = xr.DataTree(post)
    fit["sample_stats"] = xr.DataTree(
        xr.Dataset({"lp": (("chain", "draw"), lp)}, coords={"chain": post["chain"].values})
    )
    data = prepare_latent_class(ratings)
    fit[EM_GROUP] = xr.DataTree(em_start_group(model, data, start))
    fit.attrs.update({k: v for k, v in em.attrs.items() if k not in ("health", "health_ok")})
    fit.attrs["method"] = "nuts"
    return fit


def collapse(label: int) -> Callable[[xr.Dataset], xr.Dataset]:
    """A class almost never predicted: its prevalence set near 0."""

    def f(post: xr.Dataset) -> xr.Dataset:
        prev = post["prevalence"].copy()
        prev.loc[{"category": label}] = 1e-6
        return post.assign(prevalence=prev / prev.sum("category"))

    return f


def permute_true(post: xr.Dataset) -> xr.Dataset:
    """Dawid-Skene's labelling with true classes 0 and 1 swapped (rows and prevalence)."""
    perm = [1, 0, 2]
    conf = post["confusion"].isel(true=perm).assign_coords(true=post["confusion"]["true"])
    prev = post["prevalence"].isel(category=perm).assign_coords(category=post["category"])
    return post.assign(confusion=conf, prevalence=prev)


@pytest.mark.parametrize("model", [DawidSkene(), MACE()], ids=["dawid_skene", "mace"])
def test_chains_in_the_em_mode_pass(model, crowd):
    fit = chains_from_em(model, crowd.ratings)
    switching, other, table = mode_report(model, fit)
    assert switching == [] and other == []
    assert table.height == N_CHAINS
    assert (table["em_disagree"] == 0).all() and (table["lp_gap_z"] < 5).all()
    assert diagnose(fit, warn=False, ess_min=1).modes == ()


@pytest.mark.parametrize("model", [DawidSkene(), MACE()], ids=["dawid_skene", "mace"])
def test_a_collapsed_chain_with_a_lower_log_density_is_flagged(model, crowd):
    # the second class (code 1) all but vanishes from chain 2, whose lp sits 40 below
    fit = chains_from_em(model, crowd.ratings, collapse(1), lp_shift=40.0)
    switching, other, table = mode_report(model, fit)
    assert switching == []
    assert len(other) == 2, other
    assert other[0].startswith("chain 2 left the EM mode") and "class(es) c1" in other[0]
    assert other[1].startswith("chain 2's mean log density sits")
    bad = table.filter(table["chain"] == 2)
    assert bad["em_disagree"][0] > EM_DISAGREE_MAX and bad["lp_gap_z"][0] > 5
    d = diagnose(fit, warn=False, ess_min=1)
    assert not d.ok and d.modes == tuple(other)
    assert set(other) <= set(d.problems)
    # the fit's health says so too (computed for a fit without its health attrs)
    h = fit_health(fit)
    assert not h.ok and any("left the EM mode" in line for line in h.lines)


def test_a_permuted_chain_is_flagged_twice(crowd):
    fit = chains_from_em(DawidSkene(), crowd.ratings, permute_true)
    switching, other, _ = mode_report(DawidSkene(), fit)
    assert len(switching) == 1 and "chain 2" in switching[0]
    assert len(other) == 1 and "left the EM mode" in other[0]


def test_a_chain_differing_on_uncertain_units_only_passes(crowd):
    # nudging chain 2's prevalence relabels items whose EM label was uncertain, not the
    # ones it labels with probability >= 0.9: a healthy posterior with uncertain items
    model = DawidSkene()

    def nudge(post: xr.Dataset) -> xr.Dataset:
        prev = post["prevalence"] * xr.DataArray([0.8, 1.25, 1.0], dims="category")
        return post.assign(prevalence=prev / prev.sum("category"))

    fit = chains_from_em(model, crowd.ratings, nudge)
    em = fit[EM_GROUP]["prob"].values
    data = prepare_latent_class(crowd.ratings)
    from raterstats.models.latent_class.summaries import chain_label_prob

    lab = np.argmax(chain_label_prob(model, fit, data)[2], axis=-1)
    changed = lab != em.argmax(axis=-1)
    assert changed.any()  # the chain's labels differ from EM's ...
    assert not changed[em.max(axis=-1) >= CONFIDENT_PROB].any()  # ... on uncertain units only
    assert mode_report(model, fit)[:2] == ([], [])


def test_a_reloaded_fit_is_checked_the_same(crowd, tmp_path):
    model = DawidSkene()
    fit = chains_from_em(model, crowd.ratings, collapse(0), lp_shift=40.0)
    path = tmp_path / "fit.nc"
    fit.to_netcdf(path)
    back = xr.open_datatree(path).load()
    assert mode_table(model, back).equals(mode_table(model, fit))
    # without the stored EM start, the check refits EM on the fit's own data
    del back[EM_GROUP]
    assert mode_report(model, back)[1] == mode_report(model, fit)[1]


@pytest.mark.slow
def test_sampled_fits_in_and_out_of_the_em_mode():
    from raterstats.inference import run_density

    # dense raters: a permuted labelling is a separate mode a chain does not leave (on the
    # sparse crowd of the other tests a chain started there finds its way back in warm-up)
    crowd = hard_crowd(
        n_items=150, n_raters=6, labels_per_item=6, n_classes=3, activity_shape=None,
        spammer_fraction=0.0, class_imbalance=1.5, accuracy=0.8, random_seed=11,
    )  # fmt: skip
    model = DawidSkene()
    fit = model.fit(crowd.ratings, draws=300, tune=300, chains=2, random_seed=1, progress=False)
    assert EM_GROUP in fit.children
    assert diagnose(fit, warn=False, ess_min=100).modes == ()
    # a chain started in the permuted labelling stays there and is flagged
    data = prepare_latent_class(crowd.ratings)
    learnt = model.learn_priors(data, random_seed=1, em_options={})
    start = learnt.nuts_start(data, 1)
    assert start is not None
    start["confusion"] = start["confusion"][..., [1, 0, 2], :]
    start["prevalence"] = start["prevalence"][..., [1, 0, 2]]
    density = learnt.density(data, start=start)
    assert density is not None
    other = run_density(density, draws=300, tune=300, chains=1, random_seed=2, progress=False)
    both = fit.copy()
    post = xr.concat(
        [fit["posterior"].to_dataset(), other["posterior"].to_dataset()], dim="chain"
    ).assign_coords(chain=[0, 1, 2])
    ss = xr.concat(
        [fit["sample_stats"].to_dataset()[["lp"]], other["sample_stats"].to_dataset()[["lp"]]],
        dim="chain",
    ).assign_coords(chain=[0, 1, 2])
    both["posterior"] = xr.DataTree(post)
    both["sample_stats"] = xr.DataTree(ss)
    del both["label_posterior"]
    d = diagnose(both, warn=False, ess_min=1, rhat_max=10)
    assert len(d.label_switching) == 1 and "chain 2" in d.label_switching[0]
    assert len(d.modes) == 2, d.modes
    assert d.modes[0].startswith("chain 2 left the EM mode")
    assert d.modes[1].startswith("chain 2's mean log density sits")
    healthy = d.chain_modes.filter(d.chain_modes["chain"] < 2)
    assert (healthy["em_disagree"] < 0.02).all() and (healthy["lp_gap_z"] < 5).all()


@pytest.mark.parametrize("model", [DawidSkene(), MACE()], ids=["dawid_skene", "mace"])
def test_a_sample_with_checkpoints_stops_where_a_chain_left_the_em_mode(model, crowd):
    """At a checkpoint, a failed mode check ends the sample (a chain in another mode stays
    there: more draws would only cost time); chains in the EM mode pass (their constant
    draws are not judged by R-hat / ESS)."""
    _, _, start = em_start(model, crowd.ratings)
    verdict = model._checkpoint_verdict(model.prepare(crowd.ratings), start)

    def with_divergences(fit: xr.DataTree) -> xr.DataTree:
        stats = fit["sample_stats"].to_dataset()
        fit["sample_stats"] = xr.DataTree(
            stats.assign(diverging=(("chain", "draw"), np.zeros((N_CHAINS, N_DRAWS), bool)))
        )
        return fit

    left = with_divergences(chains_from_em(model, crowd.ratings, collapse(1), lp_shift=40.0))
    why = verdict(left)
    assert why is not None
    assert why.startswith("the model's own checks of its chains fail: chain 2 left the EM mode")
    assert verdict(with_divergences(chains_from_em(model, crowd.ratings))) == "passed its checks"
