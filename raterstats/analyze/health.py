"""The health of what a section shows: the fit-health line under each model section, the
banners above a table computed from a fit (``> **Warning:** ...`` when the fit fails its
checks, ``> **Note:** ...`` when its intervals are not a posterior), and posterior
predictive checks said in words.

Each rule lives in one function here, so that the whole report follows it."""

from __future__ import annotations

import math
from typing import Any

import xarray as xr

from raterstats.formatting import escape_markdown

#: methods that give a point estimate (no posterior uncertainty)
POINT_METHODS = ("map", "em")


def fit_health(dt: xr.DataTree) -> tuple[bool, str]:
    """``(ok, text)``: whether the fit passes its checks, and its health summary.

    Reads the fit's attrs ``health_ok`` / ``health`` when present; else computes it with
    :func:`raterstats.diagnostics.diagnose` (``warn=False``).

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.simulate import archehr_like_study
    >>> dt = MACE().fit(archehr_like_study(n_cases=4, n_systems=3, random_seed=1).ratings,
    ...                 method="em", random_seed=1)
    >>> fit_health(dt)[0]
    True
    """
    a = dt.attrs
    if "health_ok" in a and "health" in a:
        return bool(int(a["health_ok"])), str(a["health"])
    import warnings

    from raterstats.diagnostics import diagnose

    with warnings.catch_warnings():
        # R-hat of constant parameters (padding) is 0 / 0: diagnose reports them itself
        warnings.simplefilter("ignore", RuntimeWarning)
        diag = diagnose(dt, warn=False)
    method = str(a.get("method", diag.method))
    if method in POINT_METHODS or method != "nuts":
        return True, (
            f"{method.upper()} fit: a point estimate, without posterior uncertainty "
            "(no sampling diagnostics apply)."
        )
    return diag.ok, _summary(diag)


def _summary(diag: Any) -> str:
    """A few lines of a Diagnosis: divergences, max R-hat, min bulk / tail ESS, and the
    failing parameters counted by variable (the five worst variables)."""
    import polars as pl

    t = diag.parameters
    lines = [
        f"{'OK' if diag.ok else 'FAILS'}: {diag.n_chains} chain(s) x {diag.n_draws} draws; "
        f"{diag.divergences} divergence(s); max R-hat {float(t['rhat'].max()):.3f}, "
        f"min bulk ESS {float(t['ess_bulk'].min()):.0f}, "
        f"min tail ESS {float(t['ess_tail'].min()):.0f}"
    ]
    bad = t.filter(~pl.col("ok"))
    if bad.height:
        worst = (
            bad.group_by("variable")
            .agg(pl.len().alias("n"), pl.col("rhat").max(), pl.col("ess_bulk").min())
            .sort("rhat", descending=True)
            .head(5)
        )
        shown = ", ".join(
            f"{v} ({n}; R-hat {r:.3f}, bulk ESS {e:.0f})" for v, n, r, e in worst.iter_rows()
        )
        lines.append(f"{bad.height} parameter(s) fail R-hat <= 1.01 or ESS >= 400; worst: {shown}")
    other = [p for p in diag.problems if "parameter(s) fail" not in p and "divergent" not in p]
    lines += other
    return "\n".join(lines)


def record_health(dt: xr.DataTree) -> None:
    """Store the fit's health in its attrs ``health_ok`` / ``health`` when it does not carry
    them yet (computed once, read by every table shown from the fit)."""
    if "health_ok" not in dt.attrs or "health" not in dt.attrs:
        ok, text = fit_health(dt)
        dt.attrs["health_ok"] = int(ok)
        dt.attrs["health"] = text


def health_lines(dt: xr.DataTree) -> list[str]:
    """The fit-health block under a model section: one line saying whether the fit passes
    its checks, then its summary as a code block."""
    from raterstats.formatting import markdown_code_block

    ok, text = fit_health(dt)
    method = str(dt.attrs.get("method", "nuts"))
    if method in POINT_METHODS:
        head = (
            "**Fit health:** a point estimate: the results below have no posterior "
            "uncertainty (an interval of zero width is not certainty)."
        )
    elif ok:
        head = "**Fit health:** every check passed (divergences, R-hat, bulk and tail ESS)."
    else:
        head = (
            "**Fit health:** the fit FAILS its checks; its results below are not to be "
            "trusted until it is refitted with more draws (or another parameterisation)."
        )
    return [head, "", markdown_code_block(text), ""]


def fit_warning(dt: xr.DataTree) -> str | None:
    """One sentence naming what failed when the fit fails its checks, else ``None``."""
    ok, text = fit_health(dt)
    if ok:
        return None
    first = text.splitlines()[0].removeprefix("FAILS: ")[:200] if text else ""
    return (
        "this is computed from a fit that fails its convergence checks"
        + (f" ({first})" if first else "")
        + "; do not rely on it before refitting with more draws (the fit-health line of "
        "the model's section says what failed)."
    )


def uncertainty_note(dt: xr.DataTree) -> str | None:
    """A sentence when the fit is a point estimate (MAP / EM), else ``None``."""
    method = str(dt.attrs.get("method", "nuts"))
    if method in POINT_METHODS:
        return (
            f"the fit is a point estimate ({method.upper()}): it has no posterior uncertainty, "
            "so a value here carries no interval, and a zero-width one is not certainty."
        )
    return None


def banners(*sources: Any) -> list[str]:
    """The banner lines above a table computed from a fit.

    ``sources`` are results (``xr.Dataset`` with attrs ``fit_warning`` /
    ``uncertainty_note``) and fits (``xr.DataTree``: attrs ``health_ok`` == 0, or failing
    checks, give a warning; a MAP / EM fit a note); each text is shown once. Returns the
    Markdown lines (with a blank line after), or ``[]``.

    Examples
    --------
    >>> ds = xr.Dataset(attrs={"fit_warning": "2 divergences", "uncertainty_note": "MAP"})
    >>> banners(ds)
    ['> **Warning:** 2 divergences', '', '> **Note:** MAP', '']
    """
    warnings_: list[str] = []
    notes: list[str] = []
    for src in sources:
        if src is None:
            continue
        a = src.attrs
        if isinstance(src, xr.DataTree):
            w, n = fit_warning(src), uncertainty_note(src)
        else:
            w, n = a.get("fit_warning"), a.get("uncertainty_note")
        if w and str(w) not in warnings_:
            warnings_.append(str(w))
        if n and str(n) not in notes:
            notes.append(str(n))
    if any(isinstance(s, xr.Dataset) and s.attrs.get("fit_warning") for s in sources):
        # the result's own sentence replaces the one derived from the fit
        warnings_ = [
            w for w in warnings_ if not w.startswith("this is computed from a fit")
        ] or warnings_
    lines: list[str] = []
    for w in warnings_:
        lines += [f"> **Warning:** {escape_markdown(_sentence(w))}", ""]
    for n in notes:
        lines += [f"> **Note:** {escape_markdown(_sentence(n))}", ""]
    return lines


def _sentence(text: str) -> str:
    text = " ".join(str(text).split())
    return text[:1].upper() + text[1:] if text else text


def ppc_sentence(
    statistic: str, where: str, observed: float, replicated_mean: float, ppp: float
) -> str:
    """A posterior predictive check in words: whether the model reproduces the observed
    ``statistic`` in the cell ``where`` and, when it does not, in which direction.

    The posterior predictive p-value ``ppp`` (share of replicates at least the observed
    value) outside [0.025, 0.975] means the model does not reproduce it.

    Examples
    --------
    >>> print(ppc_sentence("Randolph's kappa", "safety / coarse", 0.96, 0.81, 0.0))
    ... # doctest: +NORMALIZE_WHITESPACE
    safety / coarse: the model does not reproduce the observed Randolph's kappa (0.96): its
    replicates are lower (mean 0.81; none of them reaches the observed value), so the model
    under-states this agreement.
    """
    if any(math.isnan(x) for x in (observed, replicated_mean, ppp)):
        return (
            f"{where}: {statistic} could not be checked (undefined in the data or the replicates)."
        )
    share = (
        f"{100 * ppp:.0f}% of them reach the observed value"
        if 0 < ppp < 1
        else (
            "none of them reaches the observed value"
            if ppp == 0
            else "all of them reach or exceed it"
        )
    )
    if 0.025 <= ppp <= 0.975:
        return (
            f"{where}: the model reproduces the observed {statistic} ({observed:.2f}; "
            f"replicates mean {replicated_mean:.2f}, {share})."
        )
    lower = ppp < 0.025
    return (
        f"{where}: the model does not reproduce the observed {statistic} ({observed:.2f}): "
        f"its replicates are {'lower' if lower else 'higher'} (mean {replicated_mean:.2f}; "
        f"{share}), so the model {'under' if lower else 'over'}-states this agreement."
    )


__all__ = [
    "POINT_METHODS",
    "banners",
    "fit_health",
    "fit_warning",
    "health_lines",
    "ppc_sentence",
    "record_health",
    "uncertainty_note",
]
