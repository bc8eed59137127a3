r"""Text of results for people: tables of polars frames, and user-provided strings escaped
for each output format. Shared by ``Ratings.summary()``, the command line, the demo, the
figures and the report.

Ids, labels, file and column names come from the user's data and may hold anything. Every
output format gets them escaped, so that they show as the text they are and change nothing
around them:

- **Markdown** (:func:`escape_markdown`, :func:`markdown_table`): ``\``, ````` ``, ``*``,
  ``[``, ``]``, ``|`` and a ``_`` that is not between two letters or digits (``a_b`` cannot
  start emphasis) are backslash-escaped; ``<``, ``>``, ``&``, ``~`` and ``$``
  are written as HTML character references (``&lt;`` ...), which Markdown shows as the
  character and never as markup, math or strike-through, on GitHub and in
  :func:`raterstats.report`. A ``|`` in an id no longer adds a table column.
- **HTML** (:func:`raterstats.report`): the Markdown is converted with raw HTML turned
  off and links or images only to ``http(s)``, ``mailto``, relative or in-page targets.
- **Figures** (:func:`plot_text`): ``$`` is escaped, so an id never starts matplotlib's
  math mode.
- **Terminals and all of the above** (:func:`visible`): a string with a control character
  (line break, tab, ANSI escape, ...), another invisible character, or leading or trailing
  white space is shown as its Python ``repr``, quotes included, so that it can neither
  break a line or a table row nor drive the terminal, and two ids that differ only there
  look different.
- **CSV** files are written by polars, which quotes every field that holds a separator,
  quote or line break. Spreadsheet programs may run a field that starts with ``=``, ``+``,
  ``-`` or ``@`` as a formula: open such files as data (text import), not by double-click,
  when the ids are not your own. Values are not changed, so the CSV files hold the data
  exactly.
- **JSON** is written by :func:`json.dumps`, which escapes what JSON needs.
"""

from __future__ import annotations

import math
import re
from typing import Any

import polars as pl

#: characters escaped with a backslash in Markdown (all of them in CommonMark's and
#: Python-Markdown's escapable set, ``|`` with its tables extension)
_MD_BACKSLASH = "\\`*[]|"
#: characters written as character references in Markdown (no backslash escape for them
#: in Python-Markdown; ``$`` would start math on GitHub, ``~`` strike-through)
_MD_ENTITY = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "~": "&#126;", "$": "&#36;"}
_MD_TABLE = str.maketrans({**{c: "\\" + c for c in _MD_BACKSLASH}, **_MD_ENTITY})
#: an underscore that could open or close emphasis: not between two letters or digits
_MD_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")


def visible(text: str) -> str:
    r"""``text`` as it is, or its ``repr`` when it holds a character that would not show
    (a control character such as a line break, tab or ANSI escape, or another character
    Python does not print, such as a zero-width space) or starts or ends with white space.

    Examples
    --------
    >>> visible("rater 1"), visible("é"), visible("a\nb"), visible("\x1b[31mred"), visible(" a")
    ('rater 1', 'é', "'a\\nb'", "'\\x1b[31mred'", "' a'")
    """
    text = str(text)
    if text.isprintable() and text == text.strip():
        return text
    return repr(text)


def visible_lines(text: str) -> str:
    r"""``text`` with every control or other unprintable character except the line break
    written as its Python escape (``\x1b``, ``\t``), for multi-line text on a terminal
    or in a code block: it keeps its lines and cannot drive the terminal.

    Examples
    --------
    >>> print(visible_lines("row 2: rater 'x'\n  got \x1b[31mred\tvalue"))
    row 2: rater 'x'
      got \x1b[31mred\tvalue
    """
    return "\n".join(
        "".join(c if c.isprintable() else repr(c)[1:-1] for c in line)
        for line in str(text).split("\n")
    )


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


def escape_markdown(text: str) -> str:
    r"""``text`` as literal Markdown inline text, for a table cell or within a line of
    prose: made :func:`visible`, then the characters Markdown would read as markup
    escaped (see the module's notes). Do not start a Markdown line with it (a leading
    ``#``, ``-`` or ``1.`` would still start a heading or a list).

    Examples
    --------
    >>> escape_markdown("a|b*c_d _e_")
    'a\\|b\\*c_d \\_e\\_'
    >>> escape_markdown("<img src=x onerror=alert(1)>")
    '&lt;img src=x onerror=alert(1)&gt;'
    >>> escape_markdown("[link](javascript:alert(1))"), escape_markdown("$x$")
    ('\\[link\\](javascript:alert(1))', '&#36;x&#36;')
    >>> escape_markdown("two\nlines")
    "'two\\\\nlines'"
    """
    return _MD_UNDERSCORE.sub(r"\\_", visible(text).translate(_MD_TABLE))


#: :func:`escape_markdown` under the name it had when it escaped table cells only
escape_markdown_cell = escape_markdown


def plot_text(text: str) -> str:
    r"""``text`` for a matplotlib title, label, legend entry or tick label: made
    :func:`visible`, and ``$`` escaped so that it is never read as math.

    Examples
    --------
    >>> plot_text("$x$ cost"), plot_text("a\nb")
    ('\\$x\\$ cost', "'a\\nb'")
    """
    return visible(text).replace("$", "\\$")


def markdown_code_block(text: str, info: str = "text") -> str:
    r"""``text`` as a fenced Markdown code block, shown as it is: the fence is longer than
    any run of backticks in ``text`` (so no line of it closes the block), and control
    characters other than line breaks are written as Python escapes (``\x1b``).

    Examples
    --------
    >>> print(markdown_code_block("a\n```\nb\x1b"))
    ````text
    a
    ```
    b\x1b
    ````
    """
    body = visible_lines(text)
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{body}\n{fence}"


def markdown_table(df: pl.DataFrame) -> str:
    """A Markdown (GitHub) table of ``df``: header, separator, one line per row; numbers
    formatted by :func:`format_cell`, every other value and every column name escaped by
    :func:`escape_markdown`, so each row has as many cells as the header.

    Examples
    --------
    >>> print(markdown_table(pl.DataFrame({"rater": ["r|1"], "kappa": [0.51234]})))
    | rater | kappa |
    |---|---|
    | r\\|1 | 0.512 |
    """

    def cell(v: Any) -> str:
        if isinstance(v, int | float) and not isinstance(v, bool):
            return format_cell(v)
        return escape_markdown(format_cell(v))

    head = "| " + " | ".join(escape_markdown(str(c)) for c in df.columns) + " |"
    sep = "|" + "|".join("---" for _ in df.columns) + "|"
    rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.iter_rows()]
    return "\n".join([head, sep, *rows])


__all__ = [
    "escape_markdown",
    "escape_markdown_cell",
    "format_cell",
    "markdown_code_block",
    "markdown_table",
    "plot_text",
    "visible",
    "visible_lines",
]
