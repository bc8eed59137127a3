"""Plain-text tables of polars frames, shared by ``Ratings.report()``, the command line and
the report.

User-provided strings (ids, labels, file names) are escaped for the target format: in a
Markdown table a ``|`` would end the cell and a line break would end the row.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl


def format_cell(v: Any) -> str:
    """One value as table text: floats to 3 significant digits (whole numbers from 1,000
    on), NaN as ``NaN``, anything else with ``str``.

    Examples
    --------
    >>> format_cell(0.123456), format_cell(12345.6), format_cell(float("nan")), format_cell("a")
    ('0.123', '12346', 'NaN', 'a')
    """
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)


def escape_markdown_cell(text: str) -> str:
    r"""``text`` safe inside a Markdown table cell: ``|`` and ``\`` escaped, line breaks
    as spaces.

    Examples
    --------
    >>> escape_markdown_cell("a|b\nc")
    'a\\|b c'
    """
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r\n", " ").replace("\n", " ")


def markdown_table(df: pl.DataFrame) -> str:
    """A Markdown (GitHub) table of ``df``: header, separator, one line per row, every cell
    formatted by :func:`format_cell` and escaped by :func:`escape_markdown_cell`.

    Examples
    --------
    >>> print(markdown_table(pl.DataFrame({"rater": ["r|1"], "kappa": [0.51234]})))
    | rater | kappa |
    |---|---|
    | r\\|1 | 0.512 |
    """
    head = "| " + " | ".join(escape_markdown_cell(str(c)) for c in df.columns) + " |"
    sep = "|" + "|".join("---" for _ in df.columns) + "|"
    rows = [
        "| " + " | ".join(escape_markdown_cell(format_cell(v)) for v in row) + " |"
        for row in df.iter_rows()
    ]
    return "\n".join([head, sep, *rows])


__all__ = ["escape_markdown_cell", "format_cell", "markdown_table"]
