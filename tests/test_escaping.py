"""Issue 18, item 2 (ids in outputs): every user-provided string is escaped in every
output format.

A rater named ``x|y`` shifted a Markdown table's columns, and ``<img src=x onerror=...>``
as an id went into ``report.html`` as markup. Here a small clinical-QA study gets hostile
ids for its items, raters, systems and dimensions and goes through the summary, the
agreement and ranking tables, the demo's table helpers, the figures, the command line
and the HTML report; the Markdown tables must keep their columns and the HTML must hold
the ids as text only.
"""

from __future__ import annotations

import io
import json
import re
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from raterstats import DawidSkene, Ratings, read_ratings
from raterstats.agreement import agreement, agreement_table
from raterstats.analyze import agreement_wide, label_distribution, wide_shares
from raterstats.cli import app
from raterstats.cli.app import fail
from raterstats.formatting import (
    escape_markdown,
    markdown_code_block,
    markdown_table,
    plot_text,
    visible,
)
from raterstats.plots import agreement_bars, rank_heatmap, scores_by_design
from raterstats.ranking import rank_systems, rank_table
from raterstats.report import methods_paragraph, report
from raterstats.simulate import archehr_like_study, clinical_qa_study

IMG = "<img src=x onerror=alert(1)>"
LINK = "[link](javascript:alert(1))"
#: one hostile id per rater of the study (7 raters)
RATERS = ["x|y", IMG, "a*b_c", LINK, "$x$", "back`tick", "new\nline"]
SYSTEMS = {"llm-a": "sys|a::b", "llm-b": "<b>bold</b>", "physician": "_doc $y$"}
DIMENSIONS = {"correctness": "corr|ect", "relevance": "rel::ev`", "safety": "<i>safe</i>"}
HOSTILE_TEXT = [*RATERS, *SYSTEMS.values(), *DIMENSIONS.values()]


@pytest.fixture(scope="module")
def hostile() -> Ratings:
    """The 4-question clinical-QA study with hostile ids everywhere."""
    r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    raters = dict(zip(r.raters, RATERS, strict=True))
    cols = ["item", "segment", "rater", "dimension", "design", "rating", "repeat", "system"]
    frame = r.data.select(*cols, "question", "rater_kind").with_columns(
        pl.col("rater").replace_strict(raters),
        pl.col("system").replace_strict(SYSTEMS),
        pl.col("dimension").replace_strict(DIMENSIONS),
        (pl.col("item") + "|*<u>::").alias("item"),
    )
    likert = r.scale_for("correctness")
    return read_ratings(frame, scale=dict.fromkeys(DIMENSIONS.values(), likert), name=IMG)


def unescaped_pipes(line: str) -> int:
    """Number of ``|`` in a Markdown line that are not backslash-escaped."""
    n, k = 0, 0
    while k < len(line):
        if line[k] == "\\":
            k += 2
            continue
        n += line[k] == "|"
        k += 1
    return n


def tables_of(md: str) -> list[list[str]]:
    """The Markdown tables of a document (runs of lines starting with ``|``)."""
    tables: list[list[str]] = []
    run: list[str] = []
    for line in [*md.splitlines(), ""]:
        if line.startswith("|"):
            run.append(line)
        elif run:
            tables.append(run)
            run = []
    return tables


def assert_tables_keep_columns(md: str) -> int:
    tables = tables_of(md)
    for table in tables:
        counts = {unescaped_pipes(line) for line in table}
        assert len(counts) == 1, f"rows with different numbers of cells: {table}"
    return len(tables)


class Html(HTMLParser):
    """Tags, attributes, text and the cells per table row of an HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.rows: list[int] = []
        self.tables: list[list[int]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append(0)
        elif tag in ("td", "th"):
            self.tables[-1][-1] += 1

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: str) -> Html:
    p = Html()
    p.feed(page)
    return p


def assert_inert(page: str) -> Html:
    """No tag or attribute in ``page`` comes from the data: images only as embedded
    figures, no event handlers, no script or javascript: links."""
    p = parse(page)
    for tag, attrs in p.tags:
        assert tag not in ("script", "iframe", "object", "embed", "b", "i", "u")
        assert not any(a.startswith("on") for a in attrs), (tag, attrs)
        if tag == "img" and "src" in attrs:
            assert str(attrs["src"]).startswith("data:image/png;base64,")
        assert "javascript" not in str(attrs.get("href", "")).lower()
    for cells in p.tables:
        assert len(set(cells)) == 1, f"table rows with different numbers of cells: {cells}"
    return p


def test_summary_markdown_escapes_every_id(hostile: Ratings) -> None:
    md = hostile.summary().to_markdown()
    assert assert_tables_keep_columns(md) == 2
    assert "<img" not in md and "<b>" not in md and "<i>" not in md
    assert escape_markdown(IMG) in md and "&lt;img src=x onerror=alert(1)&gt;" in md
    assert "x\\|y" in md and "a\\*b_c" in md and "\\[link\\](javascript:alert(1))" in md
    assert "&#36;x&#36;" in md and "back\\`tick" in md
    assert "'new\\\\nline'" in md  # the line break shown as \n, in quotes
    assert "\nline" not in md
    raters = tables_of(md.split("## Raters")[1])[0]
    assert len(raters) == 2 + len(RATERS)


def test_agreement_rank_and_demo_tables_keep_their_columns(hostile: Ratings) -> None:
    humans = hostile.filter(rater_kind="human", design="coarse")
    schemes = {"<s>|1": humans, "_2 $": humans.collapse("likert5_to_3")}
    ds = agreement(schemes, ["percent_agreement"], by=["dimension"], n_boot=0)
    table = agreement_table(ds)
    for frame in (table, agreement_wide(table)):
        md = markdown_table(frame)
        assert assert_tables_keep_columns(md) == 1
        assert "<s>" not in md and "&lt;s&gt;\\|1" in md and escape_markdown("corr|ect") in md
    ranking = rank_systems(hostile.filter(design="coarse"), method="mean", n_boot=20)
    md = markdown_table(rank_table(ranking))
    assert assert_tables_keep_columns(md) == 1
    assert "sys\\|a::b" in md and "&lt;b&gt;bold&lt;/b&gt;" in md and "\\_doc &#36;y&#36;" in md
    shares = wide_shares(label_distribution(humans, "<s>"))
    md = markdown_table(shares)
    assert assert_tables_keep_columns(md) == 1
    assert "&lt;i&gt;safe&lt;/i&gt;" in md and "<i>" not in md


def test_report_html_holds_the_ids_as_text_only(hostile: Ratings, tmp_path: Path) -> None:
    humans = hostile.filter(rater_kind="human", design="coarse")
    ds = agreement({IMG: humans}, ["percent_agreement"], by=["dimension"], n_boot=10)
    agreement_bars(ds, "percent_agreement").savefig(tmp_path / "bars.png")
    ranking = rank_systems(hostile.filter(design="coarse"), method="mean", n_boot=20)
    small = archehr_like_study(n_cases=2, n_systems=3, random_seed=1).ratings
    fit = DawidSkene().fit(small, method="em", random_seed=1)
    methods = methods_paragraph({f"{IMG} {LINK}": fit})
    md = "\n".join(
        [
            hostile.summary().to_markdown(),
            f"## Agreement of {escape_markdown(IMG)}",
            "",
            "![Agreement](bars.png)",
            "",
            markdown_table(agreement_table(ds)),
            "",
            "## Ranking",
            "",
            markdown_table(rank_table(ranking)),
            "",
            markdown_code_block(f"```\n{IMG}\n\x1b[31m"),
            "",
        ]
    )
    assert assert_tables_keep_columns(md) == 4
    (tmp_path / "report.md").write_text(md)
    page = report(tmp_path, methods=methods).read_text()
    p = assert_inert(page)
    assert len(p.tables) == 4
    assert [t for t, _ in p.tags].count("img") == 1  # the figure
    text = "".join(p.text)
    for s in [IMG, LINK, "x|y", "a*b_c", "$x$", "back`tick", "sys|a::b", "<i>safe</i>"]:
        assert s in text, s
    assert "'new\\nline'" in text and "\x1b" not in page
    title = re.search(r"<title>(.*)</title>", page)
    assert title is not None and title.group(1) == "Data summary"


def test_report_turns_off_raw_html_and_unsafe_links(tmp_path: Path) -> None:
    """Issue 18, item 2: markup written into report.md by hand, or from a tool that does
    not escape, is shown as text, and links lose javascript: targets."""
    (tmp_path / "report.md").write_text(
        f"# <script>alert(1)</script>\n\n{IMG}\n\n<div onclick=x>raw</div>\n\n"
        "[a](javascript:alert(1)) [b](JaVa\tScRiPt:alert(1)) [c](https://x.org) [d](table.csv)"
        "\n\n![e](data:text/html;base64,PHNjcmlwdD4=)\n"
    )
    page = report(tmp_path).read_text()
    p = assert_inert(page)
    hrefs = [a.get("href") for t, a in p.tags if t == "a" and a.get("href")]
    assert hrefs == ["https://x.org", "table.csv"]
    assert [t for t, _ in p.tags].count("img") == 1 and "data:text/html" not in page
    assert IMG in "".join(p.text) and "<title>&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_figures_draw_ids_as_text(hostile: Ratings) -> None:
    humans = hostile.filter(rater_kind="human", design="coarse")
    schemes = {"_hidden": humans, "$m$": humans}
    ds = agreement(schemes, ["percent_agreement"], by=["dimension"], n_boot=10)
    fig = agreement_bars(ds, "percent_agreement")
    ax = fig.axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sorted(legend) == ["\\$m\\$", "_hidden"]  # a leading _ is not left out
    assert {t.get_text() for t in ax.get_xticklabels()} == {
        plot_text(d) for d in DIMENSIONS.values()
    }
    ranking = rank_systems(hostile.filter(design="coarse"), method="mean", n_boot=20)
    for f in (fig, rank_heatmap(ranking), scores_by_design(ranking)):
        f.savefig(io.BytesIO(), format="png")  # draws: math text would fail or vanish
    heat = rank_heatmap(ranking)
    labels = {t.get_text() for t in heat.axes[0].get_yticklabels()}
    assert labels == {plot_text(s) for s in SYSTEMS.values()}
    assert plot_text("a\nb") == "'a\\nb'" and plot_text("$x$") == "\\$x\\$"


def test_command_line_output_shows_control_characters(tmp_path: Path) -> None:
    """Terminal output: ids with line breaks, tabs or ANSI escapes are shown as escapes."""
    frame = pl.DataFrame(
        {
            "item": ["a", "a", "b", "b"],
            "rater": ["r\x1b[31mred", "x|y\tz", "r\x1b[31mred", "x|y\tz"],
            "rating": [1, 2, 2, 2],
        }
    )
    path = tmp_path / "ratings.csv"
    frame.write_csv(path)
    res = CliRunner().invoke(app, ["validate", str(path), "-s", "likert5"])
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.output and "\t" not in res.output
    assert "'r\\\\x1b\\[31mred'" in res.output and "'x\\|y\\\\tz'" in res.output
    assert visible("r\x1b[31mred") == "'r\\x1b[31mred'"


def test_command_line_errors_keep_their_lines_but_show_control_characters(
    capsys: pytest.CaptureFixture[str],
) -> None:
    exit_ = fail("2 problems:\n  - rater r\x1b[2J\x07 unknown", 2)
    assert exit_.exit_code == 2
    err = capsys.readouterr().err
    assert err == "2 problems:\n  - rater r\\x1b[2J\\x07 unknown\n"


def test_csv_and_json_keep_hostile_ids_exactly(hostile: Ratings, tmp_path: Path) -> None:
    table = hostile.summary().raters
    table.write_csv(tmp_path / "raters.csv")
    back = pl.read_csv(tmp_path / "raters.csv", schema=table.schema)
    assert back.equals(table)
    assert json.loads(json.dumps(hostile.summary().to_dict()))["raters"] == table.to_dicts()


def test_a_table_starts_no_math_or_markup() -> None:
    md = markdown_table(pl.DataFrame({"a|b": ["~~x~~", "&amp;", "\\|"], "n": [1, -2, 3]}))
    assert md.splitlines()[0] == "| a\\|b | n |"
    assert "&#126;&#126;x&#126;&#126;" in md and "&amp;amp;" in md and "\\\\\\|" in md
    assert "| -2 |" in md  # numbers as they are


MARKUP = st.text(alphabet=st.sampled_from(list("|\\`*_[]()<>&$~#!:-\n\t x")), max_size=8)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(MARKUP, min_size=2, max_size=2), min_size=1, max_size=4), MARKUP)
def test_any_ids_keep_the_table_shape(rows: list[list[str]], column: str) -> None:
    """Random ids of separators and markup characters: every Markdown row has as many
    unescaped ``|`` as the header, the HTML table as many cells per row, and the HTML
    holds the ids as text."""
    frame = pl.DataFrame(rows, schema=[f"{column}1", f"{column}2"], orient="row")
    md = markdown_table(frame)
    lines = md.splitlines()
    assert len(lines) == 2 + len(rows)
    assert {unescaped_pipes(line) for line in lines} == {3}
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "report.md").write_text("# t\n\n" + md + "\n")
        p = assert_inert(report(d).read_text())
    assert p.tables == [[2] * (1 + len(rows))]
    text = "".join(p.text)
    for value in [*(v for row in rows for v in row), *frame.columns]:
        assert visible(value) in text
