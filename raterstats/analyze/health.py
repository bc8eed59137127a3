"""The health of what a section shows: the fit-health line under each model section, the
banners above a table computed from a fit (``> **Warning:** ...`` when the fit fails its
checks, ``> **Note:** ...`` when its intervals are not a posterior), and posterior
predictive checks said in words.

Each rule lives in one function here, so that the whole report follows it."""

from __future__ import annotations

from typing import Any

import xarray as xr

from raterstats.formatting import escape_markdown

#: methods that give a point estimate (no posterior uncertainty)
POINT_METHODS = ("map", "em")


def fit_health(dt: xr.DataTree) -> tuple[bool, str]:
    """``(ok, text)``: whether the fit passes its checks, and its health summary
    (:func:`raterstats.health.fit_health`: the fit's attrs ``health_ok`` / ``health``, or
    computed for a fit saved without them).

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.simulate import archehr_like_study
    >>> dt = MACE().fit(archehr_like_study(n_cases=4, n_systems=3, random_seed=1).ratings,
    ...                 method="em", random_seed=1)
    >>> fit_health(dt)[0]
    True
    """
    from raterstats.health import fit_health as health_of

    h = health_of(dt)
    return h.ok, h.text


def record_health(dt: xr.DataTree) -> None:
    """Store the fit's health in its attrs ``health_ok`` / ``health`` when it does not carry
    them yet (a fit saved before fits carried it; computed once, read by every table shown
    from the fit)."""
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
        checked = (
            "R-hat, bulk and tail ESS"
            if method == "gibbs"
            else "divergences, R-hat, bulk and tail ESS"
        )
        head = f"**Fit health:** every check passed ({checked})."
    else:
        head = (
            "**Fit health:** the fit FAILS its checks; its results below are not to be "
            "trusted until it is refitted with more draws (or another parameterisation)."
        )
    return [head, "", markdown_code_block(text), ""]


def fit_warning(dt: xr.DataTree) -> str | None:
    """One sentence naming what failed when the fit fails its checks, else ``None``
    (:meth:`raterstats.health.Health.fit_warning`)."""
    from raterstats.health import fit_health as health_of

    return health_of(dt).fit_warning()


def uncertainty_note(dt: xr.DataTree) -> str | None:
    """A sentence when the fit is a point estimate (MAP / EM) or an ADVI approximation, else
    ``None`` (:meth:`raterstats.health.Health.uncertainty_note`)."""
    from raterstats.health import fit_health as health_of

    return health_of(dt).uncertainty_note()


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
            w for w in warnings_ if not w.startswith("computed from a fit that failed")
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


def ppc_lines(ds: xr.Dataset, *, ci_prob: float | None = None) -> list[str]:
    """A posterior predictive check of agreement in words, as Markdown bullets: whether the
    model reproduces each observed statistic and, when it does not, in which direction
    (:func:`raterstats.diagnostics.ppc_readout_text`).

    Examples
    --------
    >>> import numpy as np
    >>> ds = xr.Dataset({"kappa_observed": (("dimension", "design"), [[0.96]]),
    ...                  "kappa": (("replicate", "dimension", "design"),
    ...                            np.linspace(0.7, 0.9, 21)[:, None, None])},
    ...                 coords={"dimension": ["safety"], "design": ["coarse"]})
    >>> ppc_lines(ds, ci_prob=0.9)[0][:60]
    '- safety, coarse: the model under-predicts agreement: observ'
    """
    from raterstats.diagnostics import ppc_readout_text

    return [
        "- " + escape_markdown(line) for line in ppc_readout_text(ds, ci_prob=ci_prob).splitlines()
    ]


__all__ = [
    "POINT_METHODS",
    "banners",
    "fit_health",
    "fit_warning",
    "health_lines",
    "ppc_lines",
    "record_health",
    "uncertainty_note",
]
