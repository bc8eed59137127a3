"""A categorical multi-scheme study simulated from hierarchical MACE: designs with different
label sets (a 3-point coarse design beside a binary fine design) in one table.

:func:`scheme_study` simulates the table that :func:`raterstats.design.combine_schemes`
makes of several rating schemes of one study (each scheme a design, each scale of a
dimension a *label space* of its own, the column ``base_dimension`` naming the dimension
measured), with every parameter of the generative model kept as the truth, so that the fit
of a :class:`~raterstats.MACE` or :class:`~raterstats.DawidSkene` model can be checked
against it (``models/mace/card.md``, section "Designs with different label sets").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
import polars as pl
import xarray as xr
from scipy.special import expit

from raterstats import schema as S
from raterstats.ingest import read_ratings
from raterstats.scales import BINARY, LIKERT5_TO_3, CategoricalScale, OrdinalScale
from raterstats.simulate import DEFAULT_SEED, SimulatedStudy

SCHEME_DIMENSIONS = ("correctness", "relevance", "safety")
SCHEME_SYSTEMS = ("physician", "llm-a", "llm-b")
#: logit offsets of the cell means per dimension (correctness, relevance, safety)
SCHEME_DIMENSION_EFFECTS = (0.0, 0.3, -0.3)
LEVELS = ("answer", "sentence")


class SchemeDesign(NamedTuple):
    """One rating scheme of :func:`scheme_study`: its number of categories and whether a
    rater labels whole answers (``"answer"``) or each sentence of an answer
    (``"sentence"``)."""

    n_categories: int
    level: str = "answer"


#: the default schemes: coarse answers on 3 points, fine answers as binary labels
DEFAULT_SCHEMES: dict[str, SchemeDesign] = {
    "coarse 3-point": SchemeDesign(3, "answer"),
    "fine binary": SchemeDesign(2, "answer"),
}
#: the schemes of the clinical-QA studies' design comparison (adds fine sentence ratings)
CLINICAL_SCHEMES: dict[str, SchemeDesign] = {
    "coarse 3-point": SchemeDesign(3, "answer"),
    "fine 3-point": SchemeDesign(3, "sentence"),
    "fine binary": SchemeDesign(2, "answer"),
}
#: default true-label prevalence by number of categories (worst label first)
DEFAULT_PREVALENCE: dict[int, tuple[float, ...]] = {
    2: (0.3, 0.7),
    3: (0.15, 0.25, 0.6),
}


def scale_for_categories(k: int) -> CategoricalScale:
    """The scale of a ``k``-category scheme of :func:`scheme_study`: the binary scale
    (no / yes) for 2, the collapsed 3-point scale (disagree / neutral / agree, the target
    of ``likert5_to_3``) for 3, a ``k``-point Likert scale otherwise.

    Examples
    --------
    >>> scale_for_categories(3).levels
    (-1, 0, 1)
    """
    if k == 2:
        return BINARY
    if k == 3:
        return LIKERT5_TO_3.target
    return OrdinalScale.likert(k)


def _check(
    schemes: Mapping[str, SchemeDesign],
    dimensions: Sequence[str],
    systems: Sequence[str],
    n_raters: int,
    raters_per_answer: int,
    max_sentences: int,
    n_questions: int,
    dimension_effects: Sequence[float],
    gains: dict[str, float],
    prevalence: Mapping[int, Sequence[float]],
) -> list[str]:
    problems = []
    if not schemes:
        problems.append("schemes: give at least one scheme")
    for name, spec in schemes.items():
        if not isinstance(name, str) or not name.strip():
            problems.append(f"scheme name must be non-empty text, got {name!r}")
        k, level = spec
        if not isinstance(k, (int, np.integer)) or k < 2:
            problems.append(f"scheme {name!r}: n_categories must be an integer >= 2, got {k!r}")
        if level not in LEVELS:
            problems.append(f"scheme {name!r}: level must be 'answer' or 'sentence', got {level!r}")
    if not dimensions or len(set(dimensions)) != len(dimensions):
        problems.append(f"dimensions must be distinct and not empty, got {list(dimensions)}")
    if not systems or len(set(systems)) != len(systems):
        problems.append(f"systems must be distinct and not empty, got {list(systems)}")
    if len(dimension_effects) != len(dimensions):
        problems.append(
            f"dimension_effects needs one value per dimension ({len(dimensions)}), "
            f"got {len(dimension_effects)}"
        )
    if n_questions < 1:
        problems.append(f"n_questions must be >= 1, got {n_questions}")
    if not 1 <= raters_per_answer <= n_raters:
        problems.append(
            f"raters_per_answer must be between 1 and n_raters={n_raters}, got {raters_per_answer}"
        )
    if max_sentences < 1:
        problems.append(f"max_sentences must be >= 1, got {max_sentences}")
    unknown = sorted(set(gains) - set(schemes))
    if unknown:
        problems.append(f"design_gain names schemes not in schemes: {unknown}")
    for k in sorted({int(s[0]) for s in schemes.values() if isinstance(s[0], (int, np.integer))}):
        p = np.asarray(prevalence.get(k, np.full(k, 1.0 / k)), dtype=float)
        if p.shape != (k,) or (p <= 0).any() or not np.isclose(p.sum(), 1.0):
            problems.append(
                f"prevalence[{k}] must be {k} positive probabilities summing to 1, got {p.tolist()}"
            )
    return problems


def scheme_study(
    *,
    random_seed: int | None = DEFAULT_SEED,
    schemes: Mapping[str, SchemeDesign | tuple[int, str]] | None = None,
    n_questions: int = 40,
    systems: Sequence[str] = SCHEME_SYSTEMS,
    dimensions: Sequence[str] = SCHEME_DIMENSIONS,
    n_raters: int = 6,
    raters_per_answer: int = 3,
    max_sentences: int = 4,
    competence_mean: float = 1.0,
    design_gain: float | Mapping[str, float] = 0.5,
    dimension_effects: Sequence[float] = SCHEME_DIMENSION_EFFECTS,
    rater_sd: float = 0.6,
    cell_sd: float = 0.3,
    spam_concentration: float = 10.0,
    prevalence: Mapping[int, Sequence[float]] | None = None,
    n_llm_judges: int = 0,
) -> SimulatedStudy:
    """Simulate a categorical study rated in several schemes with different label sets,
    from hierarchical MACE, with its ground truth.

    ``n_questions`` questions are answered by each system; each answer is rated by
    ``raters_per_answer`` raters drawn from a panel of ``n_raters`` (and by every LLM
    judge), who rate it in every scheme on every dimension: the whole answer in an
    answer-level scheme, each of its sentences (1 to ``max_sentences``) in a
    sentence-level one. Each scheme is a design; on each dimension every number of
    categories is a label space with its own true labels, named as
    :func:`raterstats.design.combine_schemes` names them (the first scheme's scale keeps
    the dimension's name, another scale is ``"<dimension> (<scheme>)"``).

    Parameters
    ----------
    random_seed : int or None
        Seed; the same seed gives identical data and truth.
    schemes : mapping of str to SchemeDesign or (n_categories, level), optional
        Scheme (design) name -> its number of categories and level (``"answer"`` or
        ``"sentence"``). Default :data:`DEFAULT_SCHEMES` (``"coarse 3-point"``: 3
        categories per answer, ``"fine binary"``: 2 categories per answer);
        :data:`CLINICAL_SCHEMES` adds ``"fine 3-point"`` (3 categories per sentence).
    n_questions : int
        Questions; each system answers each.
    systems, dimensions : sequence of str
        System and dimension names.
    n_raters, raters_per_answer : int
        The human panel and how many of it rate each answer (the same raters in every
        scheme).
    max_sentences : int
        Sentences per answer are uniform on 1..``max_sentences`` (sentence-level schemes).
    competence_mean : float
        Logit cell mean of the first scheme (before the dimension effect).
    design_gain : float or mapping of str to float
        Logit competence gain of each scheme over the first: one number for every later
        scheme, or per scheme name (missing schemes 0).
    dimension_effects : sequence of float
        Logit offset of the cell means per dimension (all its label spaces).
    rater_sd, cell_sd : float
        Spread of the rater effects ``u_j`` and of the rater x cell effects ``v_jdg``.
    spam_concentration : float
        Symmetric Dirichlet concentration of each rater's spam distribution per label
        space (the model's default prior is 10).
    prevalence : mapping of int to sequence of float, optional
        True-label distribution by number of categories, the same on every dimension
        (default :data:`DEFAULT_PREVALENCE`, uniform for other numbers of categories).
    n_llm_judges : int
        LLM judges (``rater_kind="llm"``, raters ``"llm-judge"`` or ``"llm-judge-1"``, ...)
        who rate every answer; their competence follows the same model as the panel's.

    Returns
    -------
    SimulatedStudy
        ``ratings``: columns ``item, segment, rater, dimension, design, rating, system,
        question, rater_kind, base_dimension`` (the :func:`~raterstats.design.combine_schemes`
        layout). ``truth`` (dims ``unit``, ``dimension`` = label space, ``design``,
        ``rater``, ``category``): ``true_label`` (unit x dimension, 0-based codes, -1 where
        the unit has no label in that space), ``prevalence``, ``spam`` (rater x dimension
        x category), ``competence`` and ``logit_competence`` (rater x dimension x design),
        ``rater_effect`` (rater), ``cell_effect`` (rater x dimension x design),
        ``competence_cell_mean`` (dimension x design, the planted logit cell means),
        ``design_gain`` (design), ``n_ratings`` (rater x dimension x design),
        ``panel_competence``, ``accuracy`` and ``kappa`` (dimension x design: averaged over
        the human raters who rated in the cell; ``accuracy`` is the expected share of a
        rater's labels equal to the true label, ``kappa`` Cohen's kappa of a rater's label
        against the true label) and ``rater_accuracy`` / ``rater_kappa`` per rater. Every
        rater or cell variable is NaN in the (label space, design) cells that no rating
        falls in; coordinates ``base_dimension`` (dimension), ``rater_kind`` (rater),
        ``n_categories`` (dimension), ``unit_item``, ``unit_segment`` (unit).

    Notes
    -----
    MACE (Hovy et al. 2013) with hierarchical competence, as the package fits it
    (``models/mace/card.md``): ``T_ud ~ Categorical(pi_d)`` for every unit (answer or
    sentence) and label space it is rated in; a rater is competent on a rating with
    probability ``theta_jdg``, ``logit theta_jdg = beta_dg + u_j + v_jdg`` with
    ``beta_dg = competence_mean + dimension_effect + design_gain_g``,
    ``u_j ~ N(0, rater_sd)``, ``v_jdg ~ N(0, cell_sd)`` (independent draws, so the
    panel's mean logit differs from ``beta_dg`` by sampling noise); otherwise it rates
    from its spam distribution ``xi_jd ~ Dirichlet(spam_concentration)``. True labels do
    not depend on the system (the model's own assumption).

    Examples
    --------
    >>> from raterstats.simulate_schemes import scheme_study
    >>> s = scheme_study(n_questions=4, random_seed=1)
    >>> s.ratings.designs
    ('coarse 3-point', 'fine binary')
    >>> s.ratings.dimensions[:2]
    ('correctness', 'correctness (fine binary)')
    >>> cell = s.truth["competence"].sel(dimension="correctness", design="fine binary")
    >>> bool(cell.isnull().all())  # a prior-only cell: no rating falls in it
    True
    >>> float(s.truth["panel_competence"].sel(dimension="correctness", design="coarse 3-point"))
    0.668...
    """
    spec = {
        name: SchemeDesign(*s)
        for name, s in (DEFAULT_SCHEMES if schemes is None else schemes).items()
    }
    scheme_names = list(spec)
    gains = (
        {g: (0.0 if i == 0 else float(design_gain)) for i, g in enumerate(scheme_names)}
        if isinstance(design_gain, (int, float))
        else {str(k): float(v) for k, v in design_gain.items()}
    )
    prev_by_k = dict(DEFAULT_PREVALENCE if prevalence is None else prevalence)
    problems = _check(
        spec, dimensions, systems, n_raters, raters_per_answer, max_sentences, n_questions,
        dimension_effects, gains, prev_by_k,
    )  # fmt: skip
    if n_llm_judges < 0:
        problems.append(f"n_llm_judges must be >= 0, got {n_llm_judges}")
    if problems:
        raise ValueError("scheme_study: " + "; ".join(problems))
    ss = np.random.SeedSequence(random_seed)
    rng_items, rng_lab, rng_raters, rng_assign, rng_rate = (
        np.random.default_rng(s) for s in ss.spawn(5)
    )

    # label spaces: (base dimension, K) in the order combine_schemes makes them ------------
    spaces: list[tuple[int, int]] = []  # (base index, K)
    names: list[str] = []
    for b, dim in enumerate(dimensions):
        for scheme in scheme_names:
            key = (b, spec[scheme].n_categories)
            if key not in spaces:
                spaces.append(key)
                first = not any(bb == b for bb, _ in spaces[:-1])
                names.append(dim if first else f"{dim} ({scheme})")
    n_ls = len(spaces)
    space_of = {key: d for d, key in enumerate(spaces)}
    k_of = np.array([k for _, k in spaces])
    K = int(k_of.max())
    G = len(scheme_names)
    # cell (label space, design) is rated when the design's scale is the space's
    rated = np.array(
        [[spec[g].n_categories == k for g in scheme_names] for _, k in spaces], dtype=bool
    )

    # answers and sentences ------------------------------------------------------------------
    questions = [f"q{q + 1:03d}" for q in range(n_questions)]
    n_m = len(systems)
    q_idx = np.repeat(np.arange(n_questions), n_m)
    m_idx = np.tile(np.arange(n_m), n_questions)
    items = [f"{questions[q]}-{systems[m]}" for q, m in zip(q_idx, m_idx, strict=True)]
    n_i = len(items)
    n_sent = rng_items.integers(1, max_sentences + 1, n_i)
    any_sentence = any(s.level == "sentence" for s in spec.values())
    sent_item = np.repeat(np.arange(n_i), n_sent) if any_sentence else np.zeros(0, np.int64)
    sent_seg = np.concatenate([np.arange(1, n + 1) for n in n_sent]) if any_sentence else sent_item
    unit_item = np.concatenate([np.arange(n_i), sent_item])
    unit_seg = np.concatenate([np.zeros(n_i, np.int64), sent_seg])  # 0: the whole answer
    n_u = unit_item.size

    # true labels per unit and label space ----------------------------------------------------
    prev = np.full((n_ls, K), np.nan)
    true = np.full((n_u, n_ls), -1, dtype=np.int64)
    for d, (_, k) in enumerate(spaces):
        p = np.asarray(prev_by_k.get(k, np.full(k, 1.0 / k)), dtype=float)
        prev[d, :k] = p
        for level, units in (("answer", np.arange(n_i)), ("sentence", np.arange(n_i, n_u))):
            if any(spec[g].n_categories == k and spec[g].level == level for g in scheme_names):
                true[units, d] = rng_lab.choice(k, size=units.size, p=p)

    # raters -----------------------------------------------------------------------------------
    humans = [f"r{j + 1}" for j in range(n_raters)]
    judges = (
        ["llm-judge"] if n_llm_judges == 1 else [f"llm-judge-{j + 1}" for j in range(n_llm_judges)]
    )
    raters = humans + judges
    n_r = len(raters)
    beta = np.full((n_ls, G), np.nan)
    for d, (b, _) in enumerate(spaces):
        for g, name in enumerate(scheme_names):
            if rated[d, g]:
                beta[d, g] = competence_mean + float(dimension_effects[b]) + gains.get(name, 0.0)
    u = rng_raters.normal(0.0, rater_sd, n_r)
    v = np.where(rated[None], rng_raters.normal(0.0, cell_sd, (n_r, n_ls, G)), np.nan)
    eta = beta[None] + u[:, None, None] + v
    theta = expit(eta)
    spam = np.full((n_r, n_ls, K), np.nan)
    for d, k in enumerate(k_of):
        spam[:, d, :k] = rng_raters.dirichlet(np.full(k, spam_concentration), n_r)

    # who rates what: raters_per_answer of the panel per answer, every judge ---------------
    assigned = np.stack(
        [rng_assign.choice(n_raters, size=raters_per_answer, replace=False) for _ in range(n_i)]
    )
    if judges:
        assigned = np.concatenate(
            [assigned, np.broadcast_to(np.arange(n_raters, n_r), (n_i, len(judges)))], axis=1
        )
    per = assigned.shape[1]
    r_unit, r_rater, r_space, r_design = [], [], [], []
    for g, name in enumerate(scheme_names):
        units = np.arange(n_i) if spec[name].level == "answer" else np.arange(n_i, n_u)
        for b in range(len(dimensions)):
            d = space_of[(b, spec[name].n_categories)]
            r_unit.append(np.repeat(units, per))
            r_rater.append(assigned[unit_item[units]].reshape(-1))
            r_space.append(np.full(units.size * per, d))
            r_design.append(np.full(units.size * per, g))
    ru, rr, rd, rg = (np.concatenate(a) for a in (r_unit, r_rater, r_space, r_design))
    t = true[ru, rd]
    competent = rng_rate.random(ru.size) < theta[rr, rd, rg]
    cum = np.cumsum(np.nan_to_num(spam[rr, rd]), axis=-1)
    spam_draw = np.minimum(np.sum(rng_rate.random((ru.size, 1)) > cum, axis=-1), k_of[rd] - 1)
    code = np.where(competent, t, spam_draw)

    scales = {names[d]: scale_for_categories(int(k)) for d, k in enumerate(k_of)}
    levels = {names[d]: scales[names[d]].levels for d in range(n_ls)}
    seg = unit_seg[ru]
    frame = pl.DataFrame(
        {
            S.ITEM: [items[i] for i in unit_item[ru]],
            S.SEGMENT: [None if s == 0 else str(s) for s in seg],
            S.RATER: [raters[j] for j in rr],
            S.DIMENSION: [names[d] for d in rd],
            S.DESIGN: [scheme_names[g] for g in rg],
            S.RATING: [levels[names[d]][c] for d, c in zip(rd, code, strict=True)],
            S.SYSTEM: [systems[m_idx[i]] for i in unit_item[ru]],
            S.QUESTION: [questions[q_idx[i]] for i in unit_item[ru]],
            S.RATER_KIND: [S.HUMAN if j < n_raters else S.LLM for j in rr],
            S.BASE_DIMENSION: [dimensions[spaces[d][0]] for d in rd],
        },
        schema_overrides={S.SEGMENT: pl.String},
    )
    ratings = read_ratings(
        frame,
        scale=scales,
        keep=[S.BASE_DIMENSION],
        name=f"scheme_study(random_seed={random_seed})",
    )

    # truth -------------------------------------------------------------------------------------
    n_cell = np.zeros((n_r, n_ls, G), dtype=np.int64)
    np.add.at(n_cell, (rr, rd, rg), 1)
    pe_label = np.nansum(prev[None] * spam, axis=-1)  # P(spam label = true label), (r, d)
    acc = theta + (1.0 - theta) * pe_label[:, :, None]
    marg = theta[..., None] * prev[None, :, None, :] + (1.0 - theta[..., None]) * spam[:, :, None]
    p_e = np.nansum(prev[None, :, None, :] * marg, axis=-1)
    kappa = np.where(rated[None], (acc - p_e) / (1.0 - p_e), np.nan)
    in_panel = (n_cell > 0) & (np.arange(n_r) < n_raters)[:, None, None]

    def panel_mean(x: np.ndarray) -> np.ndarray:
        n = in_panel.sum(axis=0)
        s = np.where(in_panel, x, 0.0).sum(axis=0)
        return np.where(n > 0, s / np.maximum(n, 1), np.nan)

    unit_ids = [
        S.unit_id(items[i], None if s == 0 else str(s))
        for i, s in zip(unit_item, unit_seg, strict=True)
    ]
    cell = ("rater", "dimension", "design")
    truth = xr.Dataset(
        {
            "true_label": (("unit", "dimension"), true),
            "prevalence": (("dimension", "category"), prev),
            "spam": (("rater", "dimension", "category"), spam),
            "competence": (cell, theta),
            "logit_competence": (cell, eta),
            "rater_effect": (("rater",), u),
            "cell_effect": (cell, v),
            "competence_cell_mean": (("dimension", "design"), beta),
            "design_gain": (("design",), np.array([gains.get(g, 0.0) for g in scheme_names])),
            "n_ratings": (cell, n_cell),
            "panel_competence": (("dimension", "design"), panel_mean(theta)),
            "accuracy": (("dimension", "design"), panel_mean(np.where(rated[None], acc, np.nan))),
            "kappa": (("dimension", "design"), panel_mean(kappa)),
            "rater_accuracy": (cell, np.where(rated[None], acc, np.nan)),
            "rater_kappa": (cell, kappa),
            "rater_sd": ((), rater_sd),
            "cell_sd": ((), cell_sd),
        },
        coords={
            "unit": unit_ids,
            "unit_item": ("unit", [items[i] for i in unit_item]),
            "unit_segment": ("unit", ["" if s == 0 else str(s) for s in unit_seg]),
            "dimension": names,
            "base_dimension": ("dimension", [dimensions[b] for b, _ in spaces]),
            "n_categories": ("dimension", k_of),
            "design": scheme_names,
            "rater": raters,
            "rater_kind": ("rater", [S.HUMAN] * n_raters + [S.LLM] * len(judges)),
            "category": np.arange(K),
        },
        attrs={
            "study": "scheme_study",
            "random_seed": -1 if random_seed is None else random_seed,
            "model": "mace (hierarchical)",
        },
    )
    config = {
        "random_seed": random_seed,
        "schemes": {g: [s.n_categories, s.level] for g, s in spec.items()},
        "n_questions": n_questions,
        "systems": list(systems),
        "dimensions": list(dimensions),
        "n_raters": n_raters,
        "raters_per_answer": raters_per_answer,
        "max_sentences": max_sentences,
        "competence_mean": competence_mean,
        "design_gain": gains,
        "dimension_effects": list(dimension_effects),
        "rater_sd": rater_sd,
        "cell_sd": cell_sd,
        "spam_concentration": spam_concentration,
        "prevalence": {k: list(v) for k, v in prev_by_k.items()},
        "n_llm_judges": n_llm_judges,
    }
    return SimulatedStudy(ratings=ratings, truth=truth, config=config)


__all__ = [
    "CLINICAL_SCHEMES",
    "DEFAULT_PREVALENCE",
    "DEFAULT_SCHEMES",
    "SchemeDesign",
    "scale_for_categories",
    "scheme_study",
]
