"""Hypothesis properties: invariances, bounds, perfect agreement, Krippendorff's unpairable
units; plus agreement between the fast paths and direct computations."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raterstats.agreement import (
    DegenerateAgreementWarning,
    cohen_kappa,
    conger_kappa,
    fleiss_kappa,
    fleiss_kappa_category,
    gwet_ac1,
    gwet_ac2,
    icc,
    kendall_tau_b,
    kendall_w,
    krippendorff_alpha,
    normalized_rank_position,
    percent_agreement,
    randolph_kappa,
    rbo,
    scott_pi,
    spearman_rho,
)
from raterstats.agreement import kernels as K

FAST = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def rating_matrices(draw, *, min_raters=2, max_raters=5, missing=True, min_units=2):
    """(matrix with NaN for missing, number of categories)."""
    q = draw(st.integers(2, 5))
    n = draw(st.integers(min_units, 12))
    r = draw(st.integers(min_raters, max_raters))
    cells = draw(
        st.lists(st.integers(0, q - 1), min_size=n * r, max_size=n * r).map(
            lambda v: np.asarray(v, dtype=float).reshape(n, r)
        )
    )
    if missing:
        mask = draw(
            st.lists(st.booleans(), min_size=n * r, max_size=n * r).map(
                lambda v: np.asarray(v).reshape(n, r)
            )
        )
        cells = np.where(mask & (draw(st.integers(0, 3)) > 0), np.nan, cells)
    return cells, q


def quiet(fn, *args, **kwargs):
    """Evaluate, accepting NaN with its DegenerateAgreementWarning (checked elsewhere)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateAgreementWarning)
        return fn(*args, **kwargs)


def same(a: float, b: float) -> bool:
    return (np.isnan(a) and np.isnan(b)) or bool(np.isclose(a, b, rtol=1e-9, atol=1e-12))


NOMINAL = {
    "percent_agreement": lambda m, c: percent_agreement(m, categories=c),
    "fleiss_kappa": lambda m, c: fleiss_kappa(m, categories=c),
    "scott_pi": lambda m, c: scott_pi(m, categories=c),
    "conger_kappa": lambda m, c: conger_kappa(m, categories=c),
    "randolph_kappa": lambda m, c: randolph_kappa(m, categories=c),
    "gwet_ac1": lambda m, c: gwet_ac1(m, categories=c),
    "alpha_nominal": lambda m, c: krippendorff_alpha(m, categories=c),
}
ORDERED = {
    "gwet_ac2": lambda m, c: gwet_ac2(m, categories=c),
    "fleiss_quadratic": lambda m, c: fleiss_kappa(m, weights="quadratic", categories=c),
    "conger_linear": lambda m, c: conger_kappa(m, weights="linear", categories=c),
    "alpha_ordinal": lambda m, c: krippendorff_alpha(m, level="ordinal", categories=c),
    "alpha_interval": lambda m, c: krippendorff_alpha(m, level="interval", categories=c),
    "alpha_ratio": lambda m, c: krippendorff_alpha(m, level="ratio", categories=[x + 1 for x in c]),
}


def _ratio_ready(name, m):
    return m + 1 if name == "alpha_ratio" else m


@FAST
@given(rating_matrices(), st.randoms(use_true_random=False))
def test_invariant_to_permuting_raters_and_units(data, rnd):
    m, q = data
    cats = list(range(q))
    rows = list(range(m.shape[0]))
    cols = list(range(m.shape[1]))
    rnd.shuffle(rows)
    rnd.shuffle(cols)
    permuted = m[np.ix_(rows, cols)]
    for name, fn in {**NOMINAL, **ORDERED}.items():
        a = quiet(fn, _ratio_ready(name, m), cats)
        b = quiet(fn, _ratio_ready(name, permuted), cats)
        assert same(a, b), name


@FAST
@given(rating_matrices(max_raters=2, min_raters=2))
def test_cohen_invariant_to_swapping_raters(data):
    m, q = data
    for w in ("identity", "linear", "quadratic"):
        a = quiet(cohen_kappa, m, weights=w, categories=list(range(q)))
        b = quiet(cohen_kappa, m[:, ::-1], weights=w, categories=list(range(q)))
        assert same(a, b)


@FAST
@given(rating_matrices(), st.randoms(use_true_random=False))
def test_invariant_to_relabelling_nominal_categories(data, rnd):
    m, q = data
    perm = list(range(q))
    rnd.shuffle(perm)
    names = [f"label-{p}" for p in perm]  # category k becomes text label names[k]
    relabelled = np.full(m.shape, None, dtype=object)
    ok = ~np.isnan(m)
    relabelled[ok] = [names[int(v)] for v in m[ok]]
    for name, fn in NOMINAL.items():
        a = quiet(fn, m, list(range(q)))
        b = quiet(fn, relabelled, sorted(names))
        assert same(a, b), name
    a = quiet(fleiss_kappa_category, m, categories=list(range(q)))
    b = quiet(fleiss_kappa_category, relabelled, categories=names)
    np.testing.assert_allclose(a.values, b.values, rtol=1e-9, atol=1e-12)


@FAST
@given(rating_matrices())
def test_values_in_bounds(data):
    m, q = data
    cats = list(range(q))
    pa = quiet(percent_agreement, m, categories=cats)
    assert np.isnan(pa) or 0.0 <= pa <= 1.0
    pu = quiet(percent_agreement, m, kind="unanimous", categories=cats)
    assert np.isnan(pu) or 0.0 <= pu <= pa + 1e-12  # unanimity implies all pairs agree
    for name, fn in {**NOMINAL, **ORDERED}.items():
        v = quiet(fn, _ratio_ready(name, m), cats)
        assert np.isnan(v) or v <= 1.0 + 1e-12, name
    rk = quiet(randolph_kappa, m, categories=cats)
    assert np.isnan(rk) or rk >= -1.0 / (q - 1) - 1e-12
    ac1 = quiet(gwet_ac1, m, categories=cats)
    assert np.isnan(ac1) or ac1 >= -1.0 - 1e-12
    fk = quiet(fleiss_kappa_category, m, categories=cats).values
    assert np.all(np.isnan(fk) | (fk <= 1.0 + 1e-12))


@FAST
@given(rating_matrices(missing=False, min_units=3))
def test_continuous_statistics_in_bounds(data):
    m, _ = data
    # these forms are <= 1 whenever defined (their denominators exceed their numerators);
    # ICC(2,k)'s denominator MSR + (MSC - MSE) / n can be negative, so it has no such bound
    for form in ("ICC(1,1)", "ICC(2,1)", "ICC(3,1)", "ICC(1,k)", "ICC(3,k)"):
        v = quiet(icc, m, form=form)
        assert np.isnan(v) or v <= 1.0 + 1e-9
    for tie in (True, False):
        w = quiet(kendall_w, m, tie_correction=tie)
        assert np.isnan(w) or -1e-12 <= w <= 1.0 + 1e-12
    tau = quiet(kendall_tau_b, m[:, 0], m[:, 1])
    rho = quiet(spearman_rho, m[:, 0], m[:, 1])
    assert np.isnan(tau) or -1 - 1e-12 <= tau <= 1 + 1e-12
    assert np.isnan(rho) or -1 - 1e-12 <= rho <= 1 + 1e-12


@FAST
@given(
    st.lists(st.integers(0, 4), min_size=2, max_size=15).filter(lambda v: len(set(v)) >= 2),
    st.integers(2, 5),
    st.data(),
)
def test_perfect_agreement_gives_one(truth, n_raters, data):
    m = np.repeat(np.asarray(truth, dtype=float)[:, None], n_raters, axis=1)
    cats = list(range(5))
    # some missing ratings, but every unit keeps at least two
    if n_raters > 2:
        drop = data.draw(
            st.lists(st.integers(0, n_raters - 1), min_size=len(truth), max_size=len(truth))
        )
        m[np.arange(len(truth)), drop] = np.nan
    for name, fn in {**NOMINAL, **ORDERED}.items():
        assert fn(_ratio_ready(name, m), cats) == pytest.approx(1.0, abs=1e-12), name
    assert percent_agreement(m, kind="unanimous", categories=cats) == 1.0
    if n_raters == 2:
        for w in ("identity", "linear", "quadratic"):
            assert cohen_kappa(m, weights=w, categories=cats) == pytest.approx(1.0)
    complete = np.repeat(np.asarray(truth, dtype=float)[:, None], n_raters, axis=1)
    for form in ("ICC(1,1)", "ICC(2,1)", "ICC(3,1)", "ICC(2,k)"):
        assert icc(complete, form=form) == pytest.approx(1.0)
    assert kendall_w(complete) == pytest.approx(1.0)
    assert kendall_tau_b(complete[:, 0], complete[:, 1]) == pytest.approx(1.0)
    assert spearman_rho(complete[:, 0], complete[:, 1]) == pytest.approx(1.0)


@FAST
@given(rating_matrices(), st.integers(0, 4), st.integers(0, 4))
def test_adding_a_unit_rated_once_keeps_alpha(data, value, column):
    m, q = data
    extra = np.full((1, m.shape[1]), np.nan)
    extra[0, column % m.shape[1]] = min(value, q - 1)
    bigger = np.vstack([m, extra])
    cats = list(range(q))
    for level in ("nominal", "ordinal", "interval"):
        a = quiet(krippendorff_alpha, m, level=level, categories=cats)
        b = quiet(krippendorff_alpha, bigger, level=level, categories=cats)
        assert same(a, b), level
    a = quiet(krippendorff_alpha, m + 1, level="ratio", categories=[c + 1 for c in cats])
    b = quiet(krippendorff_alpha, bigger + 1, level="ratio", categories=[c + 1 for c in cats])
    assert same(a, b)


# ----------------------------------------------------------------------------------------
# fast paths against direct computations
# ----------------------------------------------------------------------------------------
def _alpha_by_pairs(m: np.ndarray, delta) -> float:
    """Krippendorff's alpha by explicit enumeration of pairable value pairs."""
    units = [row[~np.isnan(row)] for row in m]
    units = [u for u in units if len(u) >= 2]
    values = np.concatenate(units) if units else np.zeros(0)
    n = len(values)
    d_o = sum(
        delta(u[i], u[j]) / (len(u) - 1)
        for u in units
        for i in range(len(u))
        for j in range(len(u))
        if i != j
    )
    d_e = sum(delta(a, b) for i, a in enumerate(values) for j, b in enumerate(values) if i != j)
    return float("nan") if d_e == 0 else 1.0 - (n - 1) * d_o / d_e


@FAST
@given(rating_matrices())
def test_alpha_matches_pairwise_enumeration(data):
    m, _ = data
    if np.sum(np.sum(~np.isnan(m), axis=1) >= 2) == 0:
        return
    for level, delta, shift in (
        ("nominal", lambda a, b: float(a != b), 0),
        ("interval", lambda a, b: (a - b) ** 2, 0),
        ("ratio", lambda a, b: ((a - b) / (a + b)) ** 2, 1),
    ):
        x = m + shift
        got = quiet(krippendorff_alpha, x, level=level)
        want = _alpha_by_pairs(x, delta)
        assert same(got, want), level


@FAST
@given(rating_matrices(), st.floats(0.0, 1.0))
def test_ordinal_alpha_paths_agree(data, spread):
    m, _ = data
    # distinct real values: the midrank (interval-on-ranks) path equals the coincidence path
    x = m * 10.0 + spread * np.arange(m.size).reshape(m.shape) % 3
    from raterstats.agreement.data import encode_matrix

    coded = encode_matrix(x)
    if coded.n_categories < 2 or np.all(coded.ratings_per_unit() < 2):
        return
    counts_way = K.evaluate(K.krippendorff_parts(coded.counts(), coded.values, "ordinal"))[0]
    ranks = K.ordinal_midranks(coded.unit, coded.x, coded.n_units)
    ranks_way = K.evaluate(K.krippendorff_interval_parts(coded.unit, ranks, coded.n_units))[0]
    assert same(counts_way, ranks_way)


@FAST
@given(st.lists(st.integers(0, 6), min_size=2, max_size=40), st.data())
def test_tau_b_matches_pair_counting(xs, data):
    ys = data.draw(st.lists(st.integers(0, 6), min_size=len(xs), max_size=len(xs)))
    x, y = np.asarray(xs, float), np.asarray(ys, float)
    n = len(x)
    p = q = tx = ty = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tx += 1
            elif dy == 0:
                ty += 1
            elif dx == dy:
                p += 1
            else:
                q += 1
    den = np.sqrt((p + q + tx) * (p + q + ty))
    got = quiet(kendall_tau_b, x, y)
    if den == 0:
        assert np.isnan(got)
    else:
        assert got == pytest.approx((p - q) / den, abs=1e-12)


@FAST
@given(st.lists(st.integers(0, 100), min_size=0, max_size=60))
def test_inversion_count(ys):
    y = np.asarray(ys, dtype=np.int64)
    brute = sum(1 for i in range(len(y)) for j in range(i + 1, len(y)) if y[i] > y[j])
    assert K.count_inversions(y) == brute


@FAST
@given(
    st.lists(st.integers(0, 30), min_size=1, max_size=20, unique=True),
    st.lists(st.integers(0, 30), min_size=1, max_size=20, unique=True),
    st.floats(0.05, 0.95),
)
def test_rbo_bounds_and_symmetry(s, t, p):
    a = rbo(s, t, p=p)
    assert -1e-12 <= a <= 1 + 1e-12
    assert rbo(t, s, p=p) == pytest.approx(a, abs=1e-12)
    assert rbo(s, s, p=p) == pytest.approx(1.0, abs=1e-12)
    ao = rbo(s, t, kind="average_overlap")
    assert -1e-12 <= ao <= 1 + 1e-12


@FAST
@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=2, max_size=15, unique=True))
def test_normalized_rank_position_extremes(scores):
    x = np.asarray(scores)
    assert normalized_rank_position(x, x) == 0.0
    assert normalized_rank_position(x, -x) == 1.0
