"""The ordinal model cards' front matter matches the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from raterstats import LengthEffect, OrdinalRaters
from raterstats.simulate import clinical_qa_study

yaml = pytest.importorskip("yaml", reason="PyYAML reads the cards' front matter")

CARDS = Path(__file__).resolve().parents[2] / "models"


def front_matter(name: str) -> dict:
    _, head, _ = (CARDS / name / "card.md").read_text().split("---", 2)
    return yaml.safe_load(head)


@pytest.mark.parametrize(
    ("folder", "cls"), [("ordinal", OrdinalRaters), ("length_effect", LengthEffect)]
)
def test_card_front_matter_matches_the_code(folder, cls):
    fm = front_matter(folder)
    assert fm["model"] == cls.name
    assert fm["priors"] == {k: p.to_dict() for k, p in cls.default_priors.items()}
    assert fm["options"] == cls.default_options
    assert tuple(fm["methods"]) == cls.methods
    r = clinical_qa_study(n_questions=4, random_seed=2).ratings
    model = cls().build(r)
    names = set(model.named_vars)
    if folder == "ordinal":  # the compiled density reports the same variables
        dens = OrdinalRaters().density(OrdinalRaters().prepare(r))
        names |= set(dens.var_shapes)
    assert set(fm["parameters"]) <= names
