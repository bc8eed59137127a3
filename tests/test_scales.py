"""Scales, scale maps and segment rules."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from raterstats import IntervalScale, NominalScale, OrdinalScale
from raterstats.scales import (
    LIKERT5_TO_3,
    SEGMENT_RULES,
    YES_NO_REFUTES,
    YES_PARTIALLY_NO,
    Collapse,
    SegmentRule,
    format_level,
    infer_scale,
)


def test_likert_levels_labels_and_values():
    s = OrdinalScale.likert(5)
    assert s.levels == (1, 2, 3, 4, 5)
    assert s.labels[0] == "Disagree" and s.labels[-1] == "Agree"
    np.testing.assert_array_equal(s.values, [1, 2, 3, 4, 5])
    assert s.negative_levels() == (1, 2)
    assert s.positive_levels() == (4, 5)


def test_encode_numbers_text_and_labels():
    s = OrdinalScale.likert(5)
    enc = s.encode(pl.Series(["5", " 4 ", "4.0", "Agree", "7", "x", None]))
    assert enc.code.to_list() == [4, 3, 3, 4, None, None, None]
    assert enc.rating.to_list() == ["5", "4", "4", "5", None, None, None]
    assert enc.value.to_list() == [5.0, 4.0, 4.0, 5.0, None, None, None]
    assert enc.invalid.to_list() == [False, False, False, False, True, True, False]


def test_nominal_values_are_positions():
    s = NominalScale(["yes", "partially", "no"])
    enc = s.encode(pl.Series(["no", "yes", "maybe"]))
    assert enc.code.to_list() == [2, 0, None]
    assert enc.value.to_list() == [2.0, 0.0, None]
    assert enc.invalid.to_list() == [False, False, True]
    assert "yes, partially, no" in s.expected()


def test_interval_scale_bounds():
    s = IntervalScale(0, 10)
    enc = s.encode(pl.Series(["0", "10", "10.5", "-1", "abc", None, "inf"]))
    assert enc.value.to_list() == [0.0, 10.0, None, None, None, None, None]
    assert enc.invalid.to_list() == [False, False, True, True, True, False, True]
    assert enc.code.null_count() == 7
    with pytest.raises(ValueError, match="above"):
        IntervalScale(3, 1)


@pytest.mark.parametrize(
    ("levels", "error"),
    [([1], ValueError), ([1, "a"], TypeError), ([1, 1.0], ValueError), ([True, False], TypeError)],
)
def test_bad_levels_rejected(levels, error):
    with pytest.raises(error):
        OrdinalScale(levels)


def test_format_level():
    assert format_level(3) == "3"
    assert format_level(3.0) == "3"
    assert format_level(-0.5) == "-0.5"
    assert format_level("yes") == "yes"


def test_infer_scale():
    assert infer_scale(pl.Series(["1", "2", "5"])) == OrdinalScale([1, 2, 5])
    assert isinstance(infer_scale(pl.Series(["0.5", "0.25"])), IntervalScale)
    assert infer_scale(pl.Series(["no", "yes", "no"])) == NominalScale(["no", "yes"])
    with pytest.raises(ValueError, match="only one distinct"):
        infer_scale(pl.Series(["yes", "yes"]))


def test_collapse_5_to_3_published_mapping():
    source = OrdinalScale.likert(5)
    new = LIKERT5_TO_3.codes_for(source)
    # Disagree / Partially disagree -> -1, Neutral -> 0, Partially agree / Agree -> +1
    assert [LIKERT5_TO_3.target.levels[c] for c in new] == [-1, -1, 0, 1, 1]


def test_collapse_must_map_every_level():
    partial = Collapse({1: 0, 2: 0}, OrdinalScale([0, 1]))
    with pytest.raises(ValueError, match=r"levels \['3', '4', '5'\]"):
        partial.codes_for(OrdinalScale.likert(5))


def test_score_maps():
    yn = NominalScale(["yes", "partially", "no"])
    assert YES_PARTIALLY_NO.scores_for(yn) == [1.0, 0.5, 0.0]
    assert YES_NO_REFUTES.scores_for(NominalScale(["yes", "no", "refutes"])) == [1.0, 0.0, -1.0]
    with pytest.raises(ValueError, match="no score"):
        YES_NO_REFUTES.scores_for(yn)


def test_segment_rules_flag_the_right_levels():
    likert = OrdinalScale.likert(5)
    assert SEGMENT_RULES["any_negative"].flagged_codes(likert) == [0, 1]
    assert SEGMENT_RULES["any_positive"].flagged_codes(likert) == [3, 4]
    three = LIKERT5_TO_3.target
    assert SEGMENT_RULES["any_negative"].flagged_codes(three) == [0]
    custom = SegmentRule("any_positive", positive=("yes",))
    assert custom.flagged_codes(NominalScale(["yes", "no"])) == [0]
    with pytest.raises(TypeError, match="positive="):
        SEGMENT_RULES["any_positive"].flagged_codes(NominalScale(["yes", "no"]))
    with pytest.raises(TypeError, match="nominal"):
        SEGMENT_RULES["mean"].target_scale(NominalScale(["yes", "no"]))


def test_scales_in_words():
    """Issue 17: a scale as a person writes it in summaries and reports (no Python repr)."""
    assert OrdinalScale.likert(5).in_words() == (
        "ordinal 1-5 (5 levels: 1 = Disagree, 2 = Partially disagree, 3 = Neutral, "
        "4 = Partially agree, 5 = Agree)"
    )
    assert OrdinalScale(range(0, 101)).in_words() == "ordinal 0-100 (101 levels)"
    assert NominalScale([f"c{k}" for k in range(20)]).in_words() == (
        "nominal: c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, ..., c19 (20 levels)"
    )
    assert OrdinalScale([0, 1], ["no", "yes"]).in_words() == "ordinal: 0 = no, 1 = yes"
    assert OrdinalScale([0.5, 1.5, 2.5]).in_words() == "ordinal 0.5-2.5 (3 levels)"
    assert IntervalScale(0, None).in_words() == "interval, at least 0"
    assert IntervalScale(None, 10).in_words() == "interval, at most 10"
    assert IntervalScale(-1.5, 1.5).in_words() == "interval -1.5 to 1.5"
    for s in (OrdinalScale.likert(5), NominalScale(["a", "b"]), IntervalScale(0, 1)):
        assert "Scale(" not in s.in_words()
