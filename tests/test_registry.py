"""The model registry: every model declares what the rest of the package asks of it, and the
post-fit functions, the command line and the report reach models only through it."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from raterstats.models import (
    POST_FIT_QUESTIONS,
    Model,
    model_class,
    models_answering,
    registered_models,
)

yaml = pytest.importorskip("yaml")

CARDS = Path(__file__).resolve().parents[1] / "models"
MODELS = sorted(registered_models().items())


def _cards() -> dict[str, tuple[Path, dict]]:
    out = {}
    for card in sorted(CARDS.glob("*/card.md")):
        _, head, _ = card.read_text().split("---", 2)
        fm = yaml.safe_load(head)
        out[fm["model"]] = (card, fm)
    return out


@pytest.mark.parametrize(("name", "cls"), MODELS)
def test_every_model_has_a_card_that_matches_its_declarations(name, cls) -> None:
    cards = _cards()
    assert name in cards, f"{cls.__name__}: no models/<folder>/card.md with `model: {name}`"
    _, fm = cards[name]
    module, _, attr = fm["class"].rpartition(".")
    assert getattr(importlib.import_module(module), attr) is cls
    assert fm["priors"] == {k: p.to_dict() for k, p in cls.default_priors.items()}
    assert fm["options"] == cls.default_options
    assert tuple(fm["methods"]) == cls.methods


@pytest.mark.parametrize(("name", "cls"), MODELS)
def test_every_model_declares_what_the_report_and_the_cli_need(name, cls) -> None:
    assert cls.description, f"{cls.__name__} has no description (used by the report)"
    assert cls.references, f"{cls.__name__} has no references (cited by the report)"
    for alias in cls.all_names():
        assert model_class(alias) is cls
        assert model_class(alias.replace("_", "-").upper()) is cls
    assert cls.rank_fit_method is None or cls.rank_fit_method in cls.methods


def test_questions_are_answered_by_overriding_and_unanswered_ones_name_who_answers() -> None:
    answering = {q: {c.__name__ for c in models_answering(q)} for q in POST_FIT_QUESTIONS}
    assert {"MACE", "DawidSkene"} <= answering["item_posterior"]
    assert {"MACE", "DawidSkene", "OrdinalRaters"} <= answering["rater_summary"]
    assert {"MACE", "DawidSkene", "OrdinalRaters"} <= answering["system_score_draws"]
    length_effect = model_class("length_effect")()
    with pytest.raises(TypeError, match=r"LengthEffect fits have no latent true labels.*MACE"):
        length_effect.item_posterior(None, coverage=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown question"):
        Model.answers("everything")


def test_names_are_unique_and_abstract_bases_need_no_name() -> None:
    with pytest.raises(TypeError, match="already taken by MACE"):

        class Clash(Model):  # never registered: the definition fails
            name = "mace"

    class AbstractFamily(Model):
        abstract = True

    assert AbstractFamily not in registered_models().values()
    with pytest.raises(TypeError, match="sets its own `name`"):

        class Nameless(AbstractFamily):
            pass
