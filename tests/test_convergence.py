"""issue 22: the vectorised R-hat / bulk ESS / tail ESS (raterstats.convergence) equal
arviz-stats' per-parameter functions on every kind of draws the fits produce."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from arviz_stats.base import array_stats

from raterstats.convergence import rhat_ess, sorted_quantiles


def _arviz(x: np.ndarray, prob: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = array_stats.rhat(x, chain_axis=-2, draw_axis=-1, method="rank")
        eb = array_stats.ess(x, chain_axis=-2, draw_axis=-1, method="bulk")
        et = array_stats.ess(x, chain_axis=-2, draw_axis=-1, method="tail", prob=prob)
    return np.asarray(r, float), np.asarray(eb, float), np.asarray(et, float)


def _draws(kind: str, rng: np.random.Generator, chains: int, draws: int) -> np.ndarray:
    if kind == "normal":
        return rng.normal(size=(6, chains, draws))
    if kind == "ar1":  # strong autocorrelation: long Geyer sequences
        e = rng.normal(size=(6, chains, draws))
        x = np.empty_like(e)
        x[..., 0] = e[..., 0]
        for t in range(1, draws):
            x[..., t] = 0.95 * x[..., t - 1] + e[..., t]
        return x
    if kind == "stuck":  # chains in different places: R-hat far above 1
        return rng.normal(size=(6, chains, draws)) + np.arange(chains)[None, :, None] * 3.0
    if kind == "ties":  # discrete draws: average ranks
        return rng.integers(0, 3, size=(6, chains, draws)).astype(float)
    if kind == "antithetic":  # negative lag-1 correlation: ESS above the draw count
        e = rng.normal(size=(6, chains, draws))
        x = e.copy()
        x[..., 1:] -= 0.7 * e[..., :-1]
        return x
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["normal", "ar1", "stuck", "ties", "antithetic"])
@pytest.mark.parametrize(("chains", "draws"), [(4, 200), (2, 51), (1, 40), (3, 5)])
def test_equals_arviz_stats(kind: str, chains: int, draws: int) -> None:
    rng = np.random.default_rng(abs(hash((kind, chains, draws))) % 2**32)
    x = _draws(kind, rng, chains, draws)
    for prob in (0.89, 0.94):
        got = rhat_ess(x, prob)
        want = _arviz(x, prob)
        for g, w, name in zip(got, want, ("rhat", "ess_bulk", "ess_tail"), strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9, equal_nan=True, err_msg=name)


def test_constant_missing_and_short_draws() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 3, 60))
    x[0] = 2.5  # a constant parameter (e.g. a padded category)
    x[1, 1, 7] = np.nan  # one missing draw
    x[2, 0] = x[2, 0, 0]  # one chain constant
    got = rhat_ess(x, 0.89)
    want = _arviz(x, 0.89)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-9, equal_nan=True)
    assert np.isnan(got[0][1]) and np.isnan(got[1][1])  # the missing draw reads NaN
    assert got[1][0] == 180.0  # a constant parameter: ESS is the number of draws
    r, eb, et = rhat_ess(rng.normal(size=(2, 2, 3)), 0.89)  # fewer than 4 draws
    assert np.isnan(r).all() and np.isnan(eb).all() and np.isnan(et).all()
    with pytest.raises(ValueError, match="parameter, chain, draw"):
        rhat_ess(np.zeros((2, 3)), 0.89)


def test_blocks_on_threads_give_the_same_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parameters split into blocks (computed on threads) give what one block gives."""
    import raterstats.convergence as conv

    x = np.random.default_rng(8).normal(size=(23, 4, 100))
    x[5] = 1.0
    whole = rhat_ess(x, 0.89)
    monkeypatch.setattr(conv, "BLOCK_VALUES", 3 * 4 * 100)
    blocks = rhat_ess(x, 0.89)
    for a, b in zip(whole, blocks, strict=True):
        np.testing.assert_array_equal(a, b)
    for g, w in zip(blocks, _arviz(x, 0.89), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-9, equal_nan=True)


@pytest.mark.parametrize("n", [4, 5, 100, 101, 6000, 8000])
def test_quantiles_from_the_sorted_draws_equal_numpys(n):
    """The tail ESS's quantiles come from the sort the ranks made (sorted_quantiles): the
    same values as np.quantile's default method, bit for bit, with and without ties and at
    the ends."""
    rng = np.random.default_rng(n)
    for ties in (False, True):
        x = rng.normal(size=(5, n))
        if ties:
            x = np.round(x, 1)
        for probs in ([0.055, 0.945], [0.03, 0.97], [0.0, 1.0], [0.5, 0.25]):
            got = sorted_quantiles(np.sort(x, axis=1), probs)
            np.testing.assert_array_equal(got, np.quantile(x, probs, axis=1))


def testnormal_scores_from_the_table_equal_ndtri_of_each_rank():
    """Blom's normal scores are looked up in a table of the possible ranks (multiples of
    1/2): the same numbers as ndtri applied to every rank."""
    from scipy import special

    from raterstats.convergence import BLOM_OFFSET, normal_scores

    rng = np.random.default_rng(3)
    n = 1000
    ranks = rng.integers(2, 2 * n + 1, size=(4, n)) / 2.0
    direct = special.ndtri((ranks - BLOM_OFFSET) / (n - 2 * BLOM_OFFSET + 1))
    np.testing.assert_array_equal(normal_scores(ranks.copy()), direct)
