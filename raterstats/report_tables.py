"""Markdown tables that fit the HTML report's page: :func:`fit_tables` transposes or splits a
table too wide for the content column at a 1280 px window, :func:`table_html` marks the
rendered tables up so that headers rather than numbers wrap. Used by
:func:`raterstats.report.report`."""

from __future__ import annotations

import html
import math
import re

from raterstats.defaults import REPORT_WIDTH_PX

__all__ = ["fit_tables", "table_html"]

#: estimated width (CSS px) of one character of a table cell (0.86rem of the page's 16 px
#: system font, tabular digits) and of a header cell (bold), and a cell's padding
_CELL_CHAR_PX = 7.8
_HEAD_CHAR_PX = 8.6
_CELL_PAD_PX = 22.0
#: a cell of more characters than this may wrap at its spaces
_WRAP_CHARS = 28
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_NUMBER_START = re.compile(r"^\s*([-+]?\.?\d|NaN|$)")


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table row, split at the ``|`` that are not escaped."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    cells: list[str] = []
    cur: list[str] = []
    escaped = False
    for ch in body:
        if escaped:
            cur.append(ch)
            escaped = False
        elif ch == "\\":
            cur.append(ch)
            escaped = True
        elif ch == "|":
            cells.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    last = "".join(cur).strip()
    if last or not cells:
        cells.append(last)
    return cells


def _plain(cell: str) -> str:
    """A cell's text as shown: escapes, character references and code marks resolved."""
    return re.sub(r"&#?\w+;", "x", re.sub(r"\\(.)", r"\1", cell)).replace("`", "")


def _column_px(header: str, cells: list[str]) -> float:
    """Rendered width estimate of a column: its widest cell (a long cell wraps at its
    spaces) or the longest word of its header (headers break at spaces, ``_``, ``-``,
    ``/``), plus the padding."""
    widest = 0
    for c in cells:
        text = _plain(c)
        n = len(text)
        if n > _WRAP_CHARS:
            n = max(_WRAP_CHARS, *(len(w) for w in text.split()))
        widest = max(widest, n)
    words = re.split(r"[\s_\-/]+", _plain(header))
    return max(widest * _CELL_CHAR_PX, max(map(len, words)) * _HEAD_CHAR_PX) + _CELL_PAD_PX


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
        *("| " + " | ".join(r) + " |" for r in rows),
    ]


def _fit_table(header: list[str], rows: list[list[str]], width_px: float) -> list[str] | None:
    """The table as Markdown lines that fit ``width_px`` (see :func:`fit_tables`), or
    ``None`` when it fits as it is."""
    n = len(header)
    rows = [(r + [""] * n)[:n] for r in rows]
    cols = [_column_px(header[j], [r[j] for r in rows]) for j in range(n)]
    if sum(cols) <= width_px or n < 2:
        return None
    if len(rows) + 1 < n:
        t_header = [header[0]] + [r[0] for r in rows]
        t_rows = [[header[j]] + [r[j] for r in rows] for j in range(1, n)]
        t_cols = [_column_px(t_header[j], [r[j] for r in t_rows]) for j in range(len(t_header))]
        if sum(t_cols) <= width_px:
            note = "*Transposed to fit the page: one column per row of the table.*"
            return [note, "", *_md_table(t_header, t_rows)]
    # the first column is the key; so is the second when it holds names (no cell of it
    # starts with a number, as an estimate or an interval does), e.g. design, dimension
    named = not any(_NUMBER_START.match(_plain(r[1])) for r in rows)
    keys = 2 if n > 3 and named and cols[0] + cols[1] < width_px / 2 else 1
    parts: list[list[int]] = [[]]
    used = sum(cols[:keys])
    for j in range(keys, n):
        if parts[-1] and used + cols[j] > width_px:
            parts.append([])
            used = sum(cols[:keys])
        parts[-1].append(j)
        used += cols[j]
    # as many parts, of as even a number of columns as fit (not 5 columns and then 1)
    rest = list(range(keys, n))
    size = math.ceil(len(rest) / len(parts))
    even = [rest[k : k + size] for k in range(0, len(rest), size)]
    if len(even) == len(parts) and all(
        sum(cols[:keys]) + sum(cols[j] for j in part) <= width_px for part in even
    ):
        parts = even
    out: list[str] = []
    for k, part in enumerate(parts, 1):
        span = f"{part[0] + 1}-{part[-1] + 1}" if len(part) > 1 else f"{part[0] + 1}"
        out += [
            f"*Part {k} of {len(parts)} (columns {span} of {n}; split to fit the page).*",
            "",
            *_md_table(
                [*header[:keys], *(header[j] for j in part)],
                [[*r[:keys], *(r[j] for j in part)] for r in rows],
            ),
            "",
        ]
    return out[:-1]


def table_html(body: str) -> str:
    """``body`` (HTML from Python-Markdown) with each table in a ``<div class="table-wrap">``,
    a short cell kept on one line (``class="nw"``, as :func:`fit_tables` reckons its
    width) and headers breakable after ``_`` and ``/`` (``<wbr>``), so that headers
    rather than numbers wrap when a table is narrow.

    Examples
    --------
    >>> out = table_html("<table><tr><th>a_b</th></tr><tr><td>0.5</td></tr></table>")
    >>> "<th>a_<wbr>b</th>" in out, '<td class="nw">0.5</td>' in out
    (True, True)
    >>> out.startswith('<div class="table-wrap"><table>')
    True
    """

    def cell(m: re.Match[str]) -> str:
        attrs, inner = m.group(1), m.group(2)
        short = len(html.unescape(re.sub(r"<[^>]*>", "", inner))) <= _WRAP_CHARS
        return f"<td{' class="nw"' if short else ''}{attrs}>{inner}</td>"

    def head(m: re.Match[str]) -> str:
        parts = re.split(r"(<[^>]*>|&[#\w]+;)", m.group(2))
        inner = "".join(
            p if p.startswith(("<", "&")) else re.sub(r"([_/])", r"\1<wbr>", p) for p in parts
        )
        return f"<th{m.group(1)}>{inner}</th>"

    body = re.sub(r"<td([^>]*)>(.*?)</td>", cell, body, flags=re.S)
    body = re.sub(r"<th([^>]*)>(.*?)</th>", head, body, flags=re.S)
    body = body.replace("<table>", '<div class="table-wrap"><table>')
    return body.replace("</table>", "</table></div>")


def fit_tables(markdown: str, *, width_px: float = REPORT_WIDTH_PX) -> str:
    r"""``markdown`` with every table that would be wider than ``width_px`` CSS pixels
    rewritten so that no column hides behind a horizontal scroll bar.

    The rule: a column's rendered width is estimated from its text (7.8 px per character of
    a cell, a cell of more than 28 characters wrapping at its spaces; 8.6 px per character
    of the longest word of its header, which wraps at spaces, ``_``, ``-`` and ``/``; 22 px
    of padding). A table whose columns add up to more than ``width_px`` (the report's
    content width at a 1280 px window, :data:`~raterstats.defaults.REPORT_WIDTH_PX`) is

    1. transposed when it has fewer rows than columns and fits transposed (a ranking of 14
       systems in 3 rows becomes 14 rows), else
    2. split into parts of consecutive columns that fit, each repeating the key column(s)
       (the first, and the second when it is text, e.g. design and dimension) and
       preceded by a line "Part k of n (columns i-j of m ...)".

    Cells are moved as written (escapes kept); tables in fenced code blocks are left alone.

    Parameters
    ----------
    markdown : str
        Markdown text with GitHub (pipe) tables.
    width_px : float
        Width available to a table, CSS pixels.

    Returns
    -------
    str

    Examples
    --------
    >>> row = "| r | " + " | ".join(f"{k}.5 [0.1, 0.9]" for k in range(12)) + " |"
    >>> head = "| rater | " + " | ".join(f"cell {k}" for k in range(12)) + " |"
    >>> md = "\n".join([head, "|" + "---|" * 13, *[row] * 40])
    >>> out = fit_tables(md)
    >>> out.count("split to fit the page"), out.count("| rater |")
    (2, 2)
    """
    lines = markdown.split("\n")
    out: list[str] = []
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append(line)
            i += 1
            continue
        if m:
            fence = m.group(1)
            out.append(line)
            i += 1
            continue
        if "|" in line and i + 1 < len(lines) and _SEPARATOR.match(lines[i + 1]):
            j = i + 2
            while j < len(lines) and lines[j].strip().startswith("|"):
                j += 1
            fitted = _fit_table(_cells(line), [_cells(r) for r in lines[i + 2 : j]], width_px)
            out.extend(lines[i:j] if fitted is None else fitted)
            i = j
            continue
        out.append(line)
        i += 1
    return "\n".join(out)
