"""The runnable examples in the agreement docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "raterstats.agreement.alpha",
    "raterstats.agreement.categorical",
    "raterstats.agreement.checks",
    "raterstats.agreement.continuous",
    "raterstats.agreement.data",
    "raterstats.agreement.kappa",
    "raterstats.agreement.kernels.core",
    "raterstats.agreement.kernels.ranks",
    "raterstats.agreement.ranking",
    "raterstats.agreement.specs",
    "raterstats.agreement.table",
]


@pytest.mark.parametrize("name", MODULES)
def test_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


def test_every_public_function_has_an_example_and_references():
    import raterstats.agreement as A

    for name in A.__all__:
        obj = getattr(A, name)
        if not callable(obj) or isinstance(obj, type):
            continue
        doc = obj.__doc__ or ""
        assert "Examples" in doc, name
        assert ">>> " in doc, name
        assert "Parameters" in doc, name
        assert "Returns" in doc, name
