"""Several rating schemes of one study as one table for a categorical fit: designs whose
label sets differ (a 3-point coarse design beside a binary fine design).

A :class:`~raterstats.Ratings` table has one scale per dimension, but a design comparison of
the clinical-QA studies puts schemes with different label sets side by side: whole-answer
ratings collapsed to 3 points, sentence ratings collapsed to 3 points, and sentence ratings
turned into one binary label per answer. :func:`combine_schemes` stacks the schemes into
one table in which each scheme is a design and each *label space* (a dimension on one
scale) is a dimension of its own; the column ``base_dimension`` keeps the dimension it
measures. A latent-class fit (:class:`~raterstats.MACE`, :class:`~raterstats.DawidSkene`)
of that table has one true label per unit and label space, and pools competence across
all its rater x label space x design cells (the rater effect is shared), however many
categories they have; :func:`base_dimensions` reads the map back from a fit, so that
:func:`raterstats.design.compare_designs` reports per measured dimension and design.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.provenance import Provenance
from raterstats.ratings import Ratings
from raterstats.scales import Scale


def _space_name(dimension: str, scheme: str, taken: set[str]) -> str:
    """Name of a second (third, ...) label space of ``dimension``: ``"<dimension>
    (<scheme>)"``, made unique against ``taken``."""
    name = f"{dimension} ({scheme})"
    n = 2
    while name in taken:
        name = f"{dimension} ({scheme}, {n})"
        n += 1
    return name


def combine_schemes(parts: Mapping[str, Ratings]) -> Ratings:
    """Stack rating schemes of one study into one table for a categorical fit.

    Each scheme becomes a design named after it (``"<scheme> (<design>)"`` for a scheme
    whose table holds several designs). A dimension keeps its name while every scheme
    rates it on the same scale; where schemes rate it on different scales, the first scale
    (in the order of ``parts``) keeps the name and every other scale becomes a dimension
    ``"<dimension> (<scheme>)"`` of its own, a separate label space with its own true
    labels. The column ``base_dimension`` holds the dimension each row measures
    (:func:`base_dimensions` reads it back from a fit).

    Parameters
    ----------
    parts : mapping of str to Ratings
        Scheme name -> its ratings, e.g. the ``schemes`` of
        :class:`raterstats.analyze.Scheme` applied to a study.

    Returns
    -------
    Ratings
        One table; ratings, exclusions and guessed roles of every part.

    Raises
    ------
    ValueError
        No parts, an empty or duplicate scheme name, or a part that is not a Ratings.

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> from raterstats.analyze import Scheme
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> parts = {s.name: s.apply(r) for s in (
    ...     Scheme("coarse 3-point", design="coarse", collapse="likert5_to_3"),
    ...     Scheme("fine binary", design="fine", segment_rules="any_negative"))}
    >>> both = combine_schemes(parts)
    >>> both.designs
    ('coarse 3-point', 'fine binary')
    >>> both.dimensions[:2]
    ('correctness', 'correctness (fine binary)')
    >>> [len(both.scale_for(d).levels) for d in both.dimensions[:2]]
    [3, 2]
    """
    what = "combine_schemes"
    if not parts:
        raise ValueError(f"{what}: no schemes given")
    problems = []
    for name, part in parts.items():
        if not isinstance(name, str) or not name.strip():
            problems.append(f"scheme name must be non-empty text, got {name!r}")
        if not isinstance(part, Ratings):
            problems.append(f"scheme {name!r}: expected a Ratings, got {type(part).__name__}")
    if problems:
        raise ValueError(f"{what}: " + "; ".join(problems))
    scales: dict[str, Scale] = {}
    # (base dimension, scale) -> label-space name, in the order the parts give them
    spaces: dict[tuple[str, Scale], str] = {}
    frames = []
    for scheme, part in parts.items():
        data = part.data
        if S.BASE_DIMENSION not in data.columns:
            data = data.with_columns(pl.col(S.DIMENSION).alias(S.BASE_DIMENSION))
        designs = part.designs
        design_of = {g: scheme if len(designs) == 1 else f"{scheme} ({g})" for g in designs}
        rename: dict[str, str] = {}
        for dim, scale in part.scales.items():
            base = str(data.filter(pl.col(S.DIMENSION) == dim).get_column(S.BASE_DIMENSION).first())
            key = (base, scale)
            if key not in spaces:
                first = not any(b == base for b, _ in spaces)
                spaces[key] = base if first else _space_name(base, scheme, set(spaces.values()))
            rename[dim] = spaces[key]
            scales[spaces[key]] = scale
        frames.append(
            data.with_columns(
                pl.col(S.DIMENSION).replace_strict(rename, return_dtype=pl.String),
                pl.col(S.DESIGN).replace_strict(design_of, return_dtype=pl.String),
            )
        )
    data = pl.concat(frames, how="diagonal_relaxed")
    lead = next(iter(parts.values()))
    meta = Provenance(
        source=lead.source,
        exclusions=tuple(e for p in parts.values() for e in p.exclusions),
        steps=(f"combine_schemes({', '.join(parts)})",),
        guessed_roles=tuple(
            dict.fromkeys(g for p in parts.values() for g in p.provenance.guessed_roles)
        ),
    )
    return Ratings(data, scales, provenance=meta)


def base_dimensions(dt: xr.DataTree) -> dict[str, str]:
    """The dimension each label space of a latent-class fit measures (``{dimension:
    base dimension}``; each dimension its own where the fitted ratings had no
    ``base_dimension`` column, see :func:`combine_schemes`).

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.simulate import archehr_like_study
    >>> dt = MACE().fit(archehr_like_study(n_cases=3, n_systems=3, random_seed=1).ratings,
    ...                 method="em", random_seed=1)
    >>> base_dimensions(dt)["uses_evidence"]
    'uses_evidence'
    """
    const = dt["constant_data"].to_dataset()
    dims = [str(d) for d in const["dimension"].values]
    if "base_dimension" not in const:
        return {d: d for d in dims}
    return dict(zip(dims, (str(b) for b in const["base_dimension"].values), strict=True))


__all__ = ["base_dimensions", "combine_schemes"]
