"""All 98 oracle vectors of tests/reference/agreement_vectors.json, none skipped.

Each vector's ``statistic`` and ``options`` are mapped explicitly to the public API below.
Every option key is either passed on as an argument, checked against the data (``raters``,
``q``, ``k``, ``levels``), or is a free-text statement of the convention the value depends
on, which is matched against the convention this package implements. An option key or a
convention text the dispatcher does not know fails the test instead of being ignored.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from raterstats import read_ratings
from raterstats.agreement import (
    cohen_kappa,
    conger_kappa,
    fleiss_kappa,
    fleiss_kappa_category,
    gwet_ac1,
    gwet_ac2,
    icc,
    intra_rater_agreement,
    kendall_tau_b,
    kendall_w,
    krippendorff_alpha,
    percent_agreement,
    randolph_kappa,
    rbo,
    scott_pi,
    spearman_rho,
)

VECTORS_PATH = Path(__file__).parents[1] / "reference" / "agreement_vectors.json"
ENTRIES: list[dict[str, Any]] = json.loads(VECTORS_PATH.read_text())["entries"]


class Options:
    """Option reader: every key must be consumed exactly once, or the test fails."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.entry = entry
        self.left = dict(entry["options"])

    def pop(self, key: str, default: Any = None) -> Any:
        return self.left.pop(key, default)

    def text(self, key: str, rules: dict[str, str]) -> str | None:
        """Consume a free-text convention: it must match one regex of ``rules`` (the value
        says what it means); unknown text fails."""
        if key not in self.left:
            return None
        value = str(self.left.pop(key))
        for pattern, meaning in rules.items():
            if re.search(pattern, value):
                return meaning
        raise AssertionError(f"{self.entry['id']}: unrecognised {key} convention {value!r}")

    def done(self) -> None:
        assert not self.left, f"{self.entry['id']}: option(s) not handled: {sorted(self.left)}"


# conventions this package implements, as they are phrased in the vectors
MISSING_RULES = {
    r"gwet2014": "gwet2014",
    r"^pairwise \(units with fewer than 2 ratings are skipped\)$": "gwet2014",
    r"^units with fewer than 2 ratings skipped$": "gwet2014",
    r"^pairable values only": "pairable",
    r"^listwise$": "listwise",
    r"^pa as in gwet2014; pe = 1/q": "gwet2014",
}
PE_RULES = {
    r"^sum_k pi_k\^2$": "fleiss",
    r"^sum_kl w_kl pi_k pi_l$": "fleiss",
    r"^\(1/\(q-1\)\) sum_k pi_k \(1 - pi_k\)$": "gwet",
    r"^\(sum_kl w_kl / \(q\(q-1\)\)\) sum_k pi_k \(1 - pi_k\)$": "gwet",
    r"^sum_kl w_kl / q\^2$": "brennan_prediger",
}


def weights_from_formula(formula: str | None) -> str | None:
    """The weight family a ``weight_formula`` text describes."""
    if formula is None:
        return None
    if formula.strip() == "w = I":
        return "identity"
    if "^2" in formula:
        assert re.search(r"\(k-l\)\^2/\(q-1\)\^2|\(\(x_k - x_l\)/\(x_max - x_min\)\)\^2", formula)
        return "quadratic"
    if "|k-l|/(q-1)" in formula:
        return "linear"
    raise AssertionError(f"unrecognised weight formula {formula!r}")


def read_weights(opts: Options) -> str:
    weights = opts.pop("weights", "identity")
    described = weights_from_formula(opts.pop("weight_formula"))
    if described is not None:
        assert described == weights, (weights, described)
    return weights


def matrix(entry: dict[str, Any]) -> list[list[Any]]:
    data = entry["data"]
    assert data["format"] == "items_x_raters"
    assert data["missing"] is None
    return data["ratings"]


def check_raters(opts: Options, entry: dict[str, Any]) -> None:
    raters = opts.pop("raters")
    if raters is not None:
        assert all(len(row) == len(raters) for row in matrix(entry))


def categories_of(entry: dict[str, Any]) -> list[Any] | None:
    return entry["data"].get("categories")


# ----------------------------------------------------------------------------------------
# one handler per canonical statistic name
# ----------------------------------------------------------------------------------------
def run_percent_pairwise(entry: dict[str, Any], opts: Options) -> float:
    opts.text(
        "definition",
        {
            r"agreeing rater pairs": "pbar",
            r"^Fleiss P-bar": "pbar",
            r"^Gwet weighted percent agreement": "pbar",
        },
    )
    assert opts.text("missing", MISSING_RULES) in (None, "gwet2014")
    weights = read_weights(opts)
    opts.done()
    return percent_agreement(
        matrix(entry), kind="pairwise", weights=weights, categories=categories_of(entry)
    )


def run_percent_unanimous(entry: dict[str, Any], opts: Options) -> float:
    opts.text(
        "definition",
        {r"all raters give the identical": "unanimous", r"irr::agree": "unanimous"},
    )
    missing = opts.text("missing", MISSING_RULES)
    tolerance = opts.pop("tolerance_categories", 0)
    opts.done()
    return percent_agreement(
        matrix(entry),
        kind="unanimous",
        tolerance=tolerance,
        categories=categories_of(entry),
        missing="listwise" if missing in (None, "listwise") else "available",
    )


def run_intra_rater(entry: dict[str, Any], opts: Options) -> float:
    opts.text("definition", {r"same rater in session 1 and session 2": "first-vs-repeat"})
    first_session, repeat_session = opts.pop("sessions")
    opts.done()
    data = entry["data"]
    assert data["format"] == "long"
    rows = [dict(zip(data["fields"], r, strict=True)) for r in data["ratings"]]
    assert {r["session"] for r in rows} == {first_session, repeat_session}
    frame = pl.DataFrame(
        {
            "item": [r["item"] for r in rows],
            "rater": [r["rater"] for r in rows],
            "rating": [r["label"] for r in rows],
            "repeat": [r["session"] == repeat_session for r in rows],
        }
    )
    from raterstats import NominalScale

    ratings = read_ratings(frame, scale=NominalScale(data["categories"]))
    return intra_rater_agreement(ratings, kind="percent")


def run_cohen(entry: dict[str, Any], opts: Options) -> float:
    weights = read_weights(opts)
    irr_name = opts.pop("irr_name")
    if irr_name is not None:
        assert {"unweighted": "identity", "equal": "linear", "squared": "quadratic"}[
            irr_name
        ] == weights
    check_raters(opts, entry)
    scale = opts.pop("weight_scale") or "value"
    levels = opts.pop("levels")
    if levels is not None:
        assert levels == categories_of(entry)
    assert opts.text("missing", MISSING_RULES) in (None, "gwet2014")
    opts.done()
    return cohen_kappa(
        matrix(entry), weights=weights, categories=categories_of(entry), weight_scale=scale
    )


def run_fleiss(entry: dict[str, Any], opts: Options) -> float:
    opts.text(
        "variant",
        {
            r"^Fleiss \(1971\)( fixed-marginal)?$": "fleiss",
            r"^Fleiss generalized to missing ratings \(Gwet 2014": "fleiss",
            r"^Gwet weighted Fleiss \(irrCAC fleiss\.kappa\.(raw|dist)\)$": "fleiss",
        },
    )
    weights = read_weights(opts)
    assert opts.text("missing", MISSING_RULES) in (None, "gwet2014")
    assert opts.text("pe", PE_RULES) in (None, "fleiss")
    check_raters(opts, entry)
    declared = opts.pop("categories_declared")
    if declared is not None:
        assert declared == categories_of(entry)
    opts.done()
    return fleiss_kappa(matrix(entry), weights=weights, categories=categories_of(entry))


def run_fleiss_category(entry: dict[str, Any], opts: Options) -> list[float]:
    opts.text("variant", {r"^Fleiss \(1971\) category-wise kappa": "fleiss-category"})
    order = opts.pop("category_order")
    opts.done()
    result = fleiss_kappa_category(matrix(entry), categories=order)
    assert result.coords["category"].values.tolist() == order
    return result.values.tolist()


def run_randolph(entry: dict[str, Any], opts: Options) -> float:
    opts.text("alias", {r"^brennan_prediger": "brennan_prediger"})
    opts.text("chance_agreement", {r"^1/q$": "1/q"})
    assert opts.text("pe", PE_RULES) in (None, "brennan_prediger")
    assert opts.text("missing", MISSING_RULES) in (None, "gwet2014")
    q = opts.pop("q")
    cats = categories_of(entry)
    if q is not None:
        assert q == len(cats)
    weights = read_weights(opts)
    opts.done()
    return randolph_kappa(matrix(entry), weights=weights, categories=cats)


def run_scott(entry: dict[str, Any], opts: Options) -> float:
    weights = read_weights(opts)
    assert opts.text("missing", MISSING_RULES) in (None, "gwet2014")
    opts.done()
    return scott_pi(matrix(entry), weights=weights, categories=categories_of(entry))


def run_conger(entry: dict[str, Any], opts: Options) -> float:
    opts.text("variant", {r"^Conger \(1980\) exact kappa": "conger"})
    weights = read_weights(opts)
    assert opts.text("missing", MISSING_RULES) in (None, "gwet2014")
    opts.done()
    return conger_kappa(matrix(entry), weights=weights, categories=categories_of(entry))


def run_ac1(entry: dict[str, Any], opts: Options) -> float:
    weights = read_weights(opts)
    assert opts.text("missing", MISSING_RULES) in (None, "gwet2014")
    assert opts.text("pe", PE_RULES) in (None, "gwet")
    opts.done()
    return gwet_ac1(matrix(entry), weights=weights, categories=categories_of(entry))


def run_ac2(entry: dict[str, Any], opts: Options) -> float:
    weights = read_weights(opts)
    assert opts.text("missing", MISSING_RULES) in (None, "gwet2014")
    assert opts.text("pe", PE_RULES) in (None, "gwet")
    opts.done()
    return gwet_ac2(matrix(entry), weights=weights, categories=categories_of(entry))


def run_alpha(entry: dict[str, Any], opts: Options) -> float:
    level = opts.pop("level")
    assert opts.text("missing", MISSING_RULES) in (None, "pairable")
    cats: Any = categories_of(entry)
    values = opts.pop("category_values")
    if values is not None:
        assert list(values) == cats
        cats = values
    note = opts.text("note", {r"quadratic\.weights": "quadratic weights = interval metric"})
    if note is not None:
        assert level == "interval"
    opts.done()
    return krippendorff_alpha(matrix(entry), level=level, categories=cats)


def run_icc(entry: dict[str, Any], opts: Options) -> float:
    sf = opts.pop("shrout_fleiss")
    mw = opts.pop("mcgraw_wong")
    model, kind, unit = opts.pop("model"), opts.pop("type"), opts.pop("unit")
    k = opts.pop("k")
    opts.done()
    m = matrix(entry)
    if k is not None and k != 1:
        assert k == len(m[0])
    # both names must give the same value, and the model description must fit the form
    by_sf, by_mw = icc(m, form=sf), icc(m, form=mw)
    assert by_sf == by_mw
    expected_model = {"1": "oneway"}.get(sf[4], "twoway")
    assert model == expected_model
    assert unit == ("single" if sf.endswith(",1)") else "average")
    assert kind == {"1": "agreement", "2": "agreement", "3": "consistency"}[sf[4]]
    return by_sf


def run_kendall_w(entry: dict[str, Any], opts: Options) -> float:
    tie = opts.pop("tie_correction")
    opts.text("orientation", {r"^rows = subjects ranked, columns = raters": "subjects x raters"})
    formula = opts.text("formula", {r"^W = 12 S / \(m\^2 \(n\^3 - n\) - m sum_j sum_t": "tie"})
    if formula is not None:
        assert tie is True
    opts.done()
    return kendall_w(matrix(entry), tie_correction=tie)


def run_tau_b(entry: dict[str, Any], opts: Options) -> float:
    opts.text("variant", {r"^b( \(= tau-a without ties\))?$": "b"})
    opts.done()
    return kendall_tau_b(matrix(entry))


def run_spearman(entry: dict[str, Any], opts: Options) -> float:
    opts.text(
        "ties", {r"^average \(mid\) ranks; Pearson correlation of ranks$": "mid", r"^none": "-"}
    )
    opts.done()
    return spearman_rho(matrix(entry))


def run_rbo(entry: dict[str, Any], opts: Options) -> float:
    kind = opts.text(
        "variant",
        {r"^RBO_ext \(": "ext", r"^average overlap at depth k = (\d+)": "average_overlap"},
    )
    p = opts.pop("p")
    depth = opts.pop("depth")
    opts.done()
    data = entry["data"]
    assert data["format"] == "long"
    assert data["fields"] == ["ranking", "rank", "item"]
    lists: dict[str, list[tuple[int, Any]]] = {"S": [], "T": []}
    for name, rank, item in data["ratings"]:
        lists[name].append((rank, item))
    s = [item for _, item in sorted(lists["S"])]
    t = [item for _, item in sorted(lists["T"])]
    if kind == "average_overlap":
        assert p == 1.0
        return rbo(s, t, kind="average_overlap", p=p, depth=depth)
    assert depth is None
    return rbo(s, t, p=p)


HANDLERS: dict[str, Callable[[dict[str, Any], Options], Any]] = {
    "percent_agreement_pairwise": run_percent_pairwise,
    "percent_agreement_unanimous": run_percent_unanimous,
    "intra_rater_percent_agreement": run_intra_rater,
    "cohen_kappa": run_cohen,
    "fleiss_kappa": run_fleiss,
    "fleiss_kappa_category": run_fleiss_category,
    "randolph_kappa": run_randolph,
    "scott_pi": run_scott,
    "conger_kappa": run_conger,
    "gwet_ac1": run_ac1,
    "gwet_ac2": run_ac2,
    "krippendorff_alpha": run_alpha,
    "icc": run_icc,
    "kendall_w": run_kendall_w,
    "kendall_tau_b": run_tau_b,
    "spearman_rho": run_spearman,
    "rbo": run_rbo,
}


def test_vector_file_is_complete() -> None:
    assert len(ENTRIES) == 98
    assert len({e["id"] for e in ENTRIES}) == 98
    assert {e["statistic"] for e in ENTRIES} <= set(HANDLERS)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_oracle_vector(entry: dict[str, Any]) -> None:
    got = HANDLERS[entry["statistic"]](entry, Options(entry))
    got_arr = np.atleast_1d(np.asarray(got, dtype=float))
    expected = np.atleast_1d(np.asarray(entry["expected"], dtype=float))
    assert got_arr.shape == expected.shape
    assert np.all(np.isfinite(got_arr))
    err = np.abs(got_arr - expected).max()
    assert err <= entry["tolerance"], f"{got} vs published {entry['expected']} (err {err:.3g})"
    if entry["confirmed_twice"]:
        full = np.atleast_1d(np.asarray(entry["expected_full_precision"], dtype=float))
        err_full = np.abs(got_arr - full).max()
        assert err_full <= entry["tolerance_full_precision"], (
            f"{got} vs full precision {entry['expected_full_precision']} (err {err_full:.3g})"
        )


def test_counts_of_confirmed_vectors() -> None:
    confirmed = sum(bool(e["confirmed_twice"]) for e in ENTRIES)
    assert confirmed == 58
    assert all(not math.isnan(float(np.atleast_1d(e["tolerance"])[0])) for e in ENTRIES)
