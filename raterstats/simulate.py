"""Generative simulators with known truth: the built-in clinical-QA study and an
ArchEHR-like categorical study.

:func:`clinical_qa_study` reproduces the design of a published clinical question-answering
annotation study: 100 patient questions answered by a physician and two LLMs, 3 dimensions
(correctness, relevance, safety) on a 5-point Likert scale, 6 physicians in 2 groups of 3
who rate each of their 150 answers once as a whole (*coarse*) and once sentence by sentence
(*fine*), in batches that alternate designs, then repeat 6 early answers; plus an LLM judge.
Ratings come from the ordinal rater model (``models/ordinal/card.md``): latent
answer quality, rater severity and discrimination per dimension x design, sentence
deviations, and a length bias planted in coarse ratings only.

:func:`archehr_like_study` simulates a large categorical study (about 100 cases x 28
systems, 3 raters per response from a pool of 20) from the MACE generative model
(``models/mace/card.md``).

Both return a :class:`SimulatedStudy`: the validated :class:`~raterstats.Ratings` and the
ground truth as an ``xr.Dataset`` with named dimensions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.ingest import read_ratings
from raterstats.ratings import Ratings
from raterstats.scales import NominalScale, OrdinalScale
from raterstats.simulate_crowds import hard_crowd as hard_crowd  # re-exported

# the high-agreement ordinal regime of issue 19, in its own module (this one is near the
# layout's size limit), re-exported here
from raterstats.simulate_ordinal import high_agreement_study as high_agreement_study

#: Seed of the built-in study (the shipped file ``raterstats/data/clinical_qa_study.csv``).
DEFAULT_SEED = 20240611

CLINICAL_DIMENSIONS = ("correctness", "relevance", "safety")
CLINICAL_SYSTEMS = ("physician", "llm-a", "llm-b")
#: Answer length in tokens (mean, sd) per system, as in the published study.
CLINICAL_LENGTHS = ((106.0, 54.0), (124.0, 50.0), (170.0, 52.0))
#: System effects on the latent quality (system x dimension); rows sum to zero per column.
CLINICAL_SYSTEM_EFFECTS = np.array([[0.35, 0.05, 0.40], [0.05, 0.15, -0.15], [-0.40, -0.20, -0.25]])
#: Length bias of coarse ratings per dimension (logit per SD of log length); fine has none.
CLINICAL_LENGTH_BIAS = (0.45, 0.60, 0.35)
LLM_JUDGE = "llm-judge"
EXTRA_COLUMNS = ("batch", "phase", "order")


@dataclass(frozen=True)
class SimulatedStudy:
    """A simulated study: the ratings, the ground truth, and the settings that made it."""

    ratings: Ratings
    truth: xr.Dataset
    config: dict[str, Any] = field(default_factory=dict)


def _ordered_logistic(rng: np.random.Generator, lp: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """Draw 1..K ratings with P(y <= k) = logistic(c_k - lp); ``cuts`` has shape (n, K-1)."""
    cum = 1.0 / (1.0 + np.exp(-(cuts - lp[:, None])))
    u = rng.random(size=lp.shape)
    return np.asarray(1 + np.sum(u[:, None] > cum, axis=1))


def _phase_plan(n_questions: int) -> list[tuple[str, str, int]]:
    """Phases of one physician's schedule: (phase, design, number of batches)."""
    n_cf = round(0.6 * n_questions)
    n_ff = n_questions - n_cf
    b1 = max(1, round(n_cf / 3))
    b2 = max(1, round(n_ff / 2.5)) if n_ff else 0
    return [
        ("coarse-new", "coarse", b1),
        ("fine-new", "fine", b2),
        ("fine-seen", "fine", b1),
        ("coarse-seen", "coarse", b2),
    ]


def clinical_qa_study(
    *,
    random_seed: int | None = DEFAULT_SEED,
    n_questions: int = 100,
    n_groups: int = 2,
    raters_per_group: int = 3,
    max_sentences: int = 6,
    n_repeats: int = 6,
    llm_judge: bool = True,
    length_bias: Sequence[float] = CLINICAL_LENGTH_BIAS,
    fine_discrimination_gain: float = 0.15,
) -> SimulatedStudy:
    """Simulate the built-in clinical-QA annotation study, with its ground truth.

    Parameters
    ----------
    random_seed : int or None
        Seed; the same seed gives identical data. The default is the seed of the shipped
        study file.
    n_questions : int
        Patient questions (each answered by the 3 systems); split evenly among the groups.
    n_groups, raters_per_group : int
        Physician panels; each group rates every answer to its questions.
    max_sentences : int
        Sentences sampled per answer for the fine design.
    n_repeats : int
        Early answers each physician rates again, in both designs, at the end.
    llm_judge : bool
        Add an LLM judge (rater ``"llm-judge"``, ``rater_kind="llm"``) that rates every
        answer in both designs.
    length_bias : sequence of 3 floats
        Coarse-design length effect per dimension (logit per SD of log length); the fine
        design has none. The LLM judge has 0.3 in both designs.
    fine_discrimination_gain : float
        Mean log-discrimination of fine over coarse ratings (fine is more reliable when
        positive).

    Returns
    -------
    SimulatedStudy
        ``ratings`` (columns ``item, segment, rater, dimension, design, rating, repeat,
        system, question, group, rater_kind, length, duration_s, confidence`` and the
        schedule columns ``batch, phase, order``) and ``truth``: latent quality ``eta``
        (item x dimension), ``system_effect``, ``question_effect``, ``sentence_effect``,
        rater ``severity`` / ``discrimination`` / ``length_effect`` (rater x dimension x
        design), ``cutpoints`` (dimension x design x cut), ``length_bias`` (dimension x
        design, physicians), ``z_length`` (item) and ``reliability`` (dimension x design,
        the model-implied share of latent variance due to the unit, physicians).

    Notes
    -----
    Latent quality ``eta_id = mu_d + s_m(i)d + q_q(i)d + e_id``; a fine rating of sentence
    ``s`` uses ``eta_id + w_sd``; the rating is ordered-logistic with linear predictor
    ``lambda_jdg * eta - delta_jdg + beta_jdg * z(log length_i)`` and cut-points ``c_dg``.
    Durations (seconds per answer, repeated on each of the answer's rows) average about
    240 s coarse and 460 s fine; confidence is 1-5 per answer and design.

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> study = clinical_qa_study(n_questions=10, random_seed=3)
    >>> study.ratings.designs, study.truth["severity"].dims
    (('coarse', 'fine'), ('rater', 'dimension', 'design'))
    """
    if n_questions % n_groups:
        raise ValueError(f"n_questions={n_questions} must split evenly into {n_groups} groups")
    if len(length_bias) != len(CLINICAL_DIMENSIONS):
        raise ValueError(
            "length_bias needs one value per dimension (correctness, relevance, safety)"
        )
    per_group = n_questions // n_groups
    if n_repeats > 3 * per_group:
        raise ValueError("n_repeats exceeds the answers a physician rates")
    ss = np.random.SeedSequence(random_seed)
    (rng_items, rng_lat, rng_raters, rng_sched, rng_rate, rng_time) = (
        np.random.default_rng(s) for s in ss.spawn(6)
    )
    dims = CLINICAL_DIMENSIONS
    systems = CLINICAL_SYSTEMS
    n_d, n_m = len(dims), len(systems)
    designs = ("coarse", "fine")

    # answers, lengths, sentences ------------------------------------------------------
    questions = [f"q{q + 1:03d}" for q in range(n_questions)]
    q_idx = np.repeat(np.arange(n_questions), n_m)
    m_idx = np.tile(np.arange(n_m), n_questions)
    items = [f"{questions[q]}-{systems[m]}" for q, m in zip(q_idx, m_idx, strict=True)]
    n_i = len(items)
    mean = np.array([c[0] for c in CLINICAL_LENGTHS])[m_idx]
    sd = np.array([c[1] for c in CLINICAL_LENGTHS])[m_idx]
    length = np.maximum(15, np.rint(rng_items.normal(mean, sd))).astype(int)
    tokens_per_sentence = rng_items.uniform(17.0, 24.0, n_i)
    n_sent = np.maximum(1, np.rint(length / tokens_per_sentence)).astype(int)
    sampled = [
        np.sort(rng_items.choice(n, size=min(n, max_sentences), replace=False)) + 1 for n in n_sent
    ]
    log_len = np.log(length)
    z_len = (log_len - log_len.mean()) / log_len.std()

    # latent quality ---------------------------------------------------------------------
    mu = np.array([1.0, 1.2, 0.7])
    sigma_q, sigma_e = 0.6, 0.5
    tau = np.array([0.8, 0.9, 0.7])
    q_eff = rng_lat.normal(0.0, sigma_q, (n_questions, n_d))
    e_eff = rng_lat.normal(0.0, sigma_e, (n_i, n_d))
    eta = mu + CLINICAL_SYSTEM_EFFECTS[m_idx] + q_eff[q_idx] + e_eff
    sent_items = np.concatenate([np.full(len(s), i) for i, s in enumerate(sampled)])
    sent_ids = np.concatenate(sampled)
    w = rng_lat.normal(0.0, 1.0, (sent_items.size, n_d)) * tau
    sent_pos = {
        (int(i), int(s)): k for k, (i, s) in enumerate(zip(sent_items, sent_ids, strict=True))
    }

    # raters -------------------------------------------------------------------------------
    group_names = [chr(ord("A") + g) for g in range(n_groups)]
    physicians = [f"p{j + 1}" for j in range(n_groups * raters_per_group)]
    rater_group = [group_names[j // raters_per_group] for j in range(len(physicians))]
    raters = physicians + ([LLM_JUDGE] if llm_judge else [])
    n_r = len(raters)
    sev = rng_raters.normal(0.0, 0.5, (n_r, 1, 1)) + rng_raters.normal(0.0, 0.25, (n_r, n_d, 2))
    log_disc = (
        np.log(1.5)
        + np.array([0.0, fine_discrimination_gain])[None, None, :]
        + rng_raters.normal(0.0, 0.35, (n_r, 1, 1))
        + rng_raters.normal(0.0, 0.2, (n_r, n_d, 2))
    )
    beta = np.zeros((n_r, n_d, 2))
    beta[:, :, 0] = np.asarray(length_bias, dtype=float)
    if llm_judge:
        sev[-1] = -0.6 + rng_raters.normal(0.0, 0.15, (n_d, 2))
        log_disc[-1] = np.log(0.7)
        beta[-1] = 0.3
    disc = np.exp(log_disc)
    base_cuts = np.array([-2.6, -1.3, -0.2, 1.0])
    cuts = np.sort(base_cuts + rng_raters.normal(0.0, 0.2, (n_d, 2, 4)), axis=-1)

    # schedule: one event = (rater, answer, design, repeat, batch, phase, order) ----------
    ev_rater: list[int] = []
    ev_item: list[int] = []
    ev_design: list[int] = []
    ev_repeat: list[bool] = []
    ev_batch: list[int] = []
    ev_phase: list[str] = []
    ev_order: list[int] = []
    plan = _phase_plan(per_group)
    for j, _p in enumerate(physicians):
        g = j // raters_per_group
        qs = rng_sched.permutation(np.arange(g * per_group, (g + 1) * per_group))
        n_cf = round(0.6 * per_group)
        sets = {
            "coarse-new": qs[:n_cf],
            "fine-new": qs[n_cf:],
            "fine-seen": qs[:n_cf],
            "coarse-seen": qs[n_cf:],
        }
        batch, order = 0, 0
        first_answers: list[int] = []
        for phase, design, n_batches in plan:
            for chunk in np.array_split(sets[phase], n_batches):
                batch += 1
                answers = np.concatenate([q * n_m + np.arange(n_m) for q in chunk])
                for i in rng_sched.permutation(answers):
                    order += 1
                    ev_rater.append(j)
                    ev_item.append(int(i))
                    ev_design.append(designs.index(design))
                    ev_repeat.append(False)
                    ev_batch.append(batch)
                    ev_phase.append(phase)
                    ev_order.append(order)
                    if phase == "coarse-new" and len(first_answers) < n_repeats:
                        first_answers.append(int(i))
        for d_idx in (0, 1):  # repeats: the first answers again, coarse then fine
            batch += 1
            for i in first_answers:
                order += 1
                ev_rater.append(j)
                ev_item.append(i)
                ev_design.append(d_idx)
                ev_repeat.append(True)
                ev_batch.append(batch)
                ev_phase.append("repeat")
                ev_order.append(order)
    if llm_judge:
        order = 0
        for d_idx, design in enumerate(designs):
            for i in range(n_i):
                order += 1
                ev_rater.append(n_r - 1)
                ev_item.append(i)
                ev_design.append(d_idx)
                ev_repeat.append(False)
                ev_batch.append(d_idx + 1)
                ev_phase.append(f"llm-{design}")
                ev_order.append(order)
    ev_r = np.asarray(ev_rater)
    ev_i = np.asarray(ev_item)
    ev_g = np.asarray(ev_design)
    n_ev = ev_r.size

    # per event: duration and confidence --------------------------------------------------
    speed = rng_time.lognormal(0.0, 0.2, n_r)
    base_time = np.array([240.0, 460.0])
    rel_len = np.sqrt(length / length.mean())
    duration = base_time[ev_g] * speed[ev_r] * rel_len[ev_i] * rng_time.lognormal(-0.045, 0.3, n_ev)
    is_llm = np.array([r == LLM_JUDGE for r in raters])[ev_r]
    duration = np.where(is_llm, rng_time.lognormal(np.log(4.0), 0.3, n_ev), duration)
    clarity = np.abs(eta[ev_i] - 1.0).mean(axis=1)
    confidence = np.clip(np.rint(3.6 + 0.6 * clarity + rng_time.normal(0.0, 0.8, n_ev)), 1, 5)

    # expand events to units (answer or sampled sentences) x dimensions -------------------
    unit_event = []
    unit_segment: list[int | None] = []
    for e in range(n_ev):
        if ev_g[e] == 0:
            unit_event.append(e)
            unit_segment.append(None)
        else:
            for s in sampled[ev_i[e]]:
                unit_event.append(e)
                unit_segment.append(int(s))
    ue = np.asarray(unit_event)
    n_u = ue.size
    row_event = np.repeat(ue, n_d)
    row_dim = np.tile(np.arange(n_d), n_u)
    row_seg = [seg for seg in unit_segment for _ in range(n_d)]
    ri, rr, rg = ev_i[row_event], ev_r[row_event], ev_g[row_event]
    lat = eta[ri, row_dim].copy()
    fine_rows = np.flatnonzero(rg == 1)
    w_idx = np.array(
        [sent_pos[(int(ri[k]), int(row_seg[k] or 0))] for k in fine_rows],
        dtype=np.int64,
    )
    if fine_rows.size:
        lat[fine_rows] += w[w_idx, row_dim[fine_rows]]
    lp = disc[rr, row_dim, rg] * lat - sev[rr, row_dim, rg] + beta[rr, row_dim, rg] * z_len[ri]
    y = _ordered_logistic(rng_rate, lp, cuts[row_dim, rg])

    frame = pl.DataFrame(
        {
            S.ITEM: [items[i] for i in ri],
            S.SEGMENT: [None if s is None else str(s) for s in row_seg],
            S.RATER: [raters[r] for r in rr],
            S.DIMENSION: [dims[d] for d in row_dim],
            S.DESIGN: [designs[g] for g in rg],
            S.RATING: y.astype(np.int64),
            S.REPEAT: np.asarray(ev_repeat)[row_event],
            S.SYSTEM: [systems[m_idx[i]] for i in ri],
            S.QUESTION: [questions[q_idx[i]] for i in ri],
            S.GROUP: ["llm" if raters[r] == LLM_JUDGE else rater_group[r] for r in rr],
            S.RATER_KIND: ["llm" if raters[r] == LLM_JUDGE else "human" for r in rr],
            S.LENGTH: length[ri].astype(np.float64),
            S.DURATION: np.round(duration[row_event], 1),
            S.CONFIDENCE: np.where(is_llm[row_event], np.nan, confidence[row_event]),
            "batch": np.asarray(ev_batch)[row_event],
            "phase": [ev_phase[e] for e in row_event],
            "order": np.asarray(ev_order)[row_event],
        },
        schema_overrides={S.SEGMENT: pl.String},
    ).with_columns(pl.col(S.CONFIDENCE).fill_nan(None))
    likert = OrdinalScale.likert(5)
    ratings = read_ratings(
        frame,
        scale=dict.fromkeys(dims, likert),
        keep=list(EXTRA_COLUMNS),
        name=f"clinical_qa_study(random_seed={random_seed})",
    )

    # truth ---------------------------------------------------------------------------------
    human = np.array([r != LLM_JUDGE for r in raters])
    var_eta = eta.var(axis=0)
    reliability = np.zeros((n_d, 2))
    for g in (0, 1):
        latent_var = var_eta + (tau**2 if g == 1 else 0.0)
        lam2 = disc[human, :, g] ** 2
        reliability[:, g] = (lam2 * latent_var / (lam2 * latent_var + np.pi**2 / 3)).mean(axis=0)
    sent_units = [S.unit_id(items[i], str(s)) for i, s in zip(sent_items, sent_ids, strict=True)]
    truth = xr.Dataset(
        {
            "mu": (("dimension",), mu),
            "system_effect": (("system", "dimension"), CLINICAL_SYSTEM_EFFECTS.copy()),
            "question_effect": (("question", "dimension"), q_eff),
            "residual": (("item", "dimension"), e_eff),
            "eta": (("item", "dimension"), eta),
            "sentence_effect": (("unit", "dimension"), w),
            "severity": (("rater", "dimension", "design"), sev),
            "discrimination": (("rater", "dimension", "design"), disc),
            "length_effect": (("rater", "dimension", "design"), beta),
            "length_bias": (("dimension", "design"), beta[human].mean(axis=0)),
            "cutpoints": (("dimension", "design", "cut"), cuts),
            "z_length": (("item",), z_len),
            "length": (("item",), length),
            "n_sentences": (("item",), n_sent),
            "reliability": (("dimension", "design"), reliability),
            "sigma_question": ((), sigma_q),
            "sigma_residual": ((), sigma_e),
            "tau_sentence": (("dimension",), tau),
        },
        coords={
            "dimension": list(dims),
            "system": list(systems),
            "question": questions,
            "item": items,
            "unit": sent_units,
            "unit_item": ("unit", [items[i] for i in sent_items]),
            "unit_segment": ("unit", [str(s) for s in sent_ids]),
            "rater": raters,
            "design": list(designs),
            "cut": [1, 2, 3, 4],
            "item_system": ("item", [systems[m] for m in m_idx]),
            "item_question": ("item", [questions[q] for q in q_idx]),
            "rater_group": ("rater", [*rater_group, "llm"] if llm_judge else rater_group),
        },
        attrs={
            "study": "clinical_qa",
            "random_seed": -1 if random_seed is None else random_seed,
            "link": "logit",
        },
    )
    config = {
        "random_seed": random_seed,
        "n_questions": n_questions,
        "n_groups": n_groups,
        "raters_per_group": raters_per_group,
        "max_sentences": max_sentences,
        "n_repeats": n_repeats,
        "llm_judge": llm_judge,
        "length_bias": list(length_bias),
        "fine_discrimination_gain": fine_discrimination_gain,
        "phases": [list(p) for p in plan],
    }
    return SimulatedStudy(ratings=ratings, truth=truth, config=config)


ARCHEHR_DIMENSIONS: dict[str, tuple[str, ...]] = {
    "answers_question": ("yes", "partially", "no"),
    "uses_evidence": ("yes", "no", "refutes"),
    "uses_knowledge": ("yes", "no", "conflicting"),
}


def archehr_like_study(
    *,
    random_seed: int | None = DEFAULT_SEED,
    n_cases: int = 100,
    n_systems: int = 28,
    n_raters: int = 20,
    raters_per_response: int = 3,
    n_spammers: int = 2,
) -> SimulatedStudy:
    """Simulate an ArchEHR-like categorical study from the MACE generative model.

    ``n_cases`` clinical cases, each answered by ``n_systems`` systems; every response is
    rated by ``raters_per_response`` raters drawn from a pool of ``n_raters`` on three
    categorical dimensions: answers-question (yes / partially / no), uses-evidence
    (yes / no / refutes) and uses-knowledge (yes / no / conflicting).

    True labels come from system- and case-specific category probabilities (a latent
    system skill and case difficulty on the softmax scale); a rater is competent on a
    rating with probability ``competence`` (rater x dimension) and otherwise draws from
    its own spam distribution. ``n_spammers`` raters have low competence.

    Returns
    -------
    SimulatedStudy
        ``truth`` has ``true_label`` (item x dimension, 0-based category codes),
        ``competence`` (rater x dimension), ``spam`` (rater x dimension x category),
        ``label_prob`` (system x dimension x category), ``system_skill`` (system) and
        ``case_difficulty`` (case).

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> s = archehr_like_study(n_cases=5, n_systems=4, random_seed=2)
    >>> s.ratings.n_ratings
    180
    """
    if raters_per_response > n_raters:
        raise ValueError("raters_per_response exceeds the rater pool")
    ss = np.random.SeedSequence(random_seed)
    rng_lab, rng_rat, rng_assign, rng_rate = (np.random.default_rng(s) for s in ss.spawn(4))
    dims = list(ARCHEHR_DIMENSIONS)
    n_d, n_k = len(dims), 3
    systems = [f"sys{m + 1:02d}" for m in range(n_systems)]
    cases = [f"case{c + 1:03d}" for c in range(n_cases)]
    c_idx = np.repeat(np.arange(n_cases), n_systems)
    m_idx = np.tile(np.arange(n_systems), n_cases)
    items = [f"{cases[c]}-{systems[m]}" for c, m in zip(c_idx, m_idx, strict=True)]
    n_i = len(items)

    skill = rng_lab.normal(0.0, 1.0, n_systems)
    difficulty = rng_lab.normal(0.0, 0.7, n_cases)
    # category 0 is the good label, 2 the bad one; skill moves mass towards category 0
    base = np.array([[0.8, 0.3, -0.6], [0.6, 0.4, -1.6], [0.9, 0.2, -1.8]])
    direction = np.array([1.0, 0.0, -1.0])
    strength = np.array([1.0, 0.8, 0.6])  # how strongly skill shows on each dimension
    ability = skill[m_idx] - difficulty[c_idx]
    logits = (
        base[None, :, :]
        + ability[:, None, None] * strength[None, :, None] * direction[None, None, :]
    )
    prob = np.exp(logits - logits.max(axis=-1, keepdims=True))
    prob /= prob.sum(axis=-1, keepdims=True)
    u = rng_lab.random((n_i, n_d, 1))
    true = np.sum(u > np.cumsum(prob, axis=-1), axis=-1)
    true = np.minimum(true, n_k - 1)

    raters = [f"a{j + 1:02d}" for j in range(n_raters)]
    competence = rng_rat.beta(8.0, 2.0, (n_raters, n_d))
    spam_idx = rng_rat.choice(n_raters, size=min(n_spammers, n_raters), replace=False)
    competence[spam_idx] = rng_rat.beta(2.0, 6.0, (spam_idx.size, n_d))
    spam = rng_rat.dirichlet(np.ones(n_k), (n_raters, n_d))

    assigned = np.stack(
        [rng_assign.choice(n_raters, size=raters_per_response, replace=False) for _ in range(n_i)]
    )
    row_item = np.repeat(np.arange(n_i), raters_per_response * n_d)
    row_rater = np.repeat(assigned.reshape(-1), n_d)
    row_dim = np.tile(np.arange(n_d), n_i * raters_per_response)
    t = true[row_item, row_dim]
    competent = rng_rate.random(row_item.size) < competence[row_rater, row_dim]
    sp = spam[row_rater, row_dim]
    spam_draw = np.minimum(
        np.sum(rng_rate.random((row_item.size, 1)) > np.cumsum(sp, axis=-1), axis=-1), n_k - 1
    )
    label = np.where(competent, t, spam_draw)
    frame = pl.DataFrame(
        {
            S.ITEM: [items[i] for i in row_item],
            S.RATER: [raters[r] for r in row_rater],
            S.DIMENSION: [dims[d] for d in row_dim],
            S.RATING: [ARCHEHR_DIMENSIONS[dims[d]][k] for d, k in zip(row_dim, label, strict=True)],
            S.SYSTEM: [systems[m_idx[i]] for i in row_item],
            S.QUESTION: [cases[c_idx[i]] for i in row_item],
        }
    )
    scales = {d: NominalScale(levels, name=d) for d, levels in ARCHEHR_DIMENSIONS.items()}
    ratings = read_ratings(
        frame, scale=scales, design="single", name=f"archehr_like_study(random_seed={random_seed})"
    )
    label_prob = np.stack([prob[m_idx == m].mean(axis=0) for m in range(n_systems)])
    truth = xr.Dataset(
        {
            "true_label": (("item", "dimension"), true),
            "competence": (("rater", "dimension"), competence),
            "spam": (("rater", "dimension", "category"), spam),
            "label_prob": (("system", "dimension", "category"), label_prob),
            "system_skill": (("system",), skill),
            "case_difficulty": (("case",), difficulty),
        },
        coords={
            "item": items,
            "dimension": dims,
            "rater": raters,
            "category": [0, 1, 2],
            "system": systems,
            "case": cases,
            "item_system": ("item", [systems[m] for m in m_idx]),
            "item_case": ("item", [cases[c] for c in c_idx]),
            "spammer": ("rater", np.isin(np.arange(n_raters), spam_idx)),
        },
        attrs={
            "study": "archehr_like",
            "categories": str({d: list(v) for d, v in ARCHEHR_DIMENSIONS.items()}),
            "random_seed": -1 if random_seed is None else random_seed,
        },
    )
    config = {
        "random_seed": random_seed,
        "n_cases": n_cases,
        "n_systems": n_systems,
        "n_raters": n_raters,
        "raters_per_response": raters_per_response,
        "n_spammers": n_spammers,
    }
    return SimulatedStudy(ratings=ratings, truth=truth, config=config)
