"""Modules imported on first use.

``import raterstats`` and the EM fast paths must not pay for PyMC, PyTensor, nutpie,
ArviZ or matplotlib (seconds of start-up): modules that need them bind the name to a
:class:`LazyModule`, which imports the real module when an attribute is first read.
Type checkers see the real import (under ``typing.TYPE_CHECKING``).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """A stand-in for the module ``name`` that imports it on first attribute access.

    Examples
    --------
    >>> m = LazyModule("json")
    >>> m.dumps([1, 2])
    '[1, 2]'
    >>> m
    <lazy module 'json' (imported)>
    """

    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def _load(self) -> ModuleType:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return self._module

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._load(), attr)

    def __dir__(self) -> list[str]:
        return dir(self._load())

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported"
        return f"<lazy module {self._name!r} ({state})>"
