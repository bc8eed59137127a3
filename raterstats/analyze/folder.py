"""The report folder of an analysis: where each table, figure and JSON file goes, and the list of
files written, in order (the report's "Files" section)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raterstats.files import write_atomic

if TYPE_CHECKING:
    import polars as pl
    from matplotlib.figure import Figure


def slug(text: str) -> str:
    """``text`` as a safe part of a file name (letters, digits, ``_``, ``-``; the rest ``_``).

    Examples
    --------
    >>> slug("fine / sentences ../x")
    'fine___sentences____x'
    """
    return re.sub(r"[^A-Za-z0-9_-]", "_", text)[:60] or "_"


@dataclass
class ReportFolder:
    """A folder that an analysis writes its files to, remembering each file in order.

    Examples
    --------
    >>> import tempfile, polars as pl
    >>> out = ReportFolder(Path(tempfile.mkdtemp()))
    >>> out.csv(pl.DataFrame({"a": [1]}), "t.csv")
    >>> out.json({"n": 1}, "s.json")
    >>> [p.name for p in out.files]
    ['t.csv', 's.json']
    """

    path: Path
    files: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)

    def _add(self, name: str) -> Path:
        path = self.path / name
        self.files.append(path)
        return path

    def csv(self, frame: pl.DataFrame, name: str) -> None:
        """Write ``frame`` as the CSV file ``name``."""
        write_atomic(self._add(name), frame.write_csv)

    def figure(self, fig: Figure, name: str) -> None:
        """Save ``fig`` as the PNG file ``name`` (:func:`raterstats.plots.save_figure`: at
        the report's resolution, with its smallest text size recorded for the report)."""
        from raterstats.plots import save_figure

        write_atomic(self._add(name), lambda tmp: save_figure(fig, tmp))

    def json(self, obj: Any, name: str) -> None:
        """Write ``obj`` as the JSON file ``name`` (values JSON does not know as text)."""
        text = json.dumps(obj, indent=2, default=str)
        write_atomic(self._add(name), lambda tmp: tmp.write_text(text))


__all__ = ["ReportFolder", "slug"]
