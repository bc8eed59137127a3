"""The model cards' front matter (models/<name>/card.md) matches the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from raterstats import MACE, DawidSkene

yaml = pytest.importorskip("yaml")

CARDS = Path(__file__).resolve().parents[2] / "models"


def front_matter(name: str) -> dict:
    text = (CARDS / name / "card.md").read_text()
    _, head, _ = text.split("---", 2)
    return yaml.safe_load(head)


@pytest.mark.parametrize(
    ("folder", "cls", "variants"),
    [
        ("mace", MACE, [{"hierarchical": False}, {"hierarchical": True}]),
        (
            "dawid_skene",
            DawidSkene,
            [{"pooling": p} for p in ("unpooled", "pooled", "partial", "one_coin")],
        ),
    ],
)
def test_card_front_matter_matches_the_code(folder, cls, variants, small_archehr):
    fm = front_matter(folder)
    assert fm["model"] == cls.name
    assert fm["priors"] == {k: p.to_dict() for k, p in cls.default_priors.items()}
    assert fm["options"] == cls.default_options
    assert tuple(fm["methods"]) == cls.methods
    seen: set[str] = set()
    for opts in variants:
        dens = cls(**opts).density(cls(**opts).prepare(small_archehr.ratings))
        seen |= set(dens.var_shapes)
    assert set(fm["parameters"]) <= seen
    reference = CARDS / folder / "reference.json"
    assert reference.exists()
