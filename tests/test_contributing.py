"""docs/contributing.md stays honest: its walkthrough "Adding a model: ZenCrowd, step by step"
shows three files (the model, its card, its tests) as fenced blocks titled with their
paths; these tests extract them, lint the model file as if it were at its path, and run
the walkthrough (``tests/contributing/run_walkthrough.py``) in a subprocess, because
registering a model is global and the test process must never register ZenCrowd.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "contributing.md"
RUNNER = REPO / "tests" / "contributing" / "run_walkthrough.py"
SECTION = "## Adding a model: ZenCrowd, step by step"

#: block title (the file's path in the repository) -> file name given to the runner
BLOCKS = {
    "raterstats/models/latent_class/zencrowd.py": "model.py",
    "models/zencrowd/card.md": "card.md",
    "tests/models/test_zencrowd.py": "test_model.py",
}
#: the dotted name the model file has at its path
MODULE = "raterstats.models.latent_class.zencrowd"

OPEN = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")


def split_markdown(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The lines outside fenced blocks, and ``(info string, body)`` of every fenced block
    (opened at the start of a line; a fence closes at a line of the same character, at
    least as long, and nothing else). Raises ``AssertionError`` when a fence never
    closes."""
    lines = text.splitlines()
    prose, blocks = [], []
    i = 0
    while i < len(lines):
        m = OPEN.match(lines[i])
        i += 1
        if not m:
            prose.append(lines[i - 1])
            continue
        fence, body, start = m["fence"], [], i
        while i < len(lines):
            line = lines[i].rstrip()
            i += 1
            if line and set(line) == {fence[0]} and len(line) >= len(fence):
                break
            body.append(lines[i - 1])
        else:
            raise AssertionError(f"{fence}{m['info']} (line {start}) never closes")
        blocks.append((m["info"].strip(), "\n".join(body) + "\n"))
    return prose, blocks


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """``(info string, body)`` of every fenced block (see :func:`split_markdown`)."""
    return split_markdown(text)[1]


def titled_blocks(text: str) -> dict[str, str]:
    """``{title: body}`` of the fenced blocks with a ``title="..."`` attribute."""
    out = {}
    for info, body in fenced_blocks(text):
        title = re.search(r'title="([^"]+)"', info)
        if title:
            assert title[1] not in out, f"two blocks titled {title[1]!r}"
            out[title[1]] = body
    return out


def test_the_walkthrough_is_the_last_section_and_shows_the_three_files() -> None:
    text = PAGE.read_text()
    headings = [line for line in split_markdown(text)[0] if line.startswith("## ")]
    assert headings[-1] == SECTION
    walkthrough = text[text.index(SECTION) :]
    blocks = titled_blocks(walkthrough)
    assert set(BLOCKS) <= set(blocks)
    assert blocks["models/zencrowd/card.md"].startswith("---\nmodel: zencrowd\n")
    assert len(blocks["raterstats/models/latent_class/zencrowd.py"].splitlines()) < 250


def test_the_walkthrough_adds_a_model_the_package_does_not_have() -> None:
    # the page's model is registered only in the runner's process; one of the same name in
    # the package would collide there (and the page would show a copy of package code)
    from raterstats.models import registered_models

    assert not (REPO / next(iter(BLOCKS))).exists()
    assert MODULE.rsplit(".", 1)[-1] not in registered_models()


def test_fence_parsing_catches_an_unclosed_block() -> None:
    good = '````markdown title="a.md"\n```\ninner\n```\n````\n'
    assert titled_blocks(good) == {"a.md": "```\ninner\n```\n"}
    with pytest.raises(AssertionError, match="never closes"):
        fenced_blocks("text\n```python\nx = 1\n")


def test_the_page_renders_with_the_sites_markdown_extensions() -> None:
    markdown = pytest.importorskip("markdown")
    pytest.importorskip("pymdownx")
    extensions = ["admonition", "attr_list", "tables", "toc", "pymdownx.highlight"]
    extensions += ["pymdownx.superfences", "pymdownx.details"]
    text = PAGE.read_text()
    html = markdown.markdown(text, extensions=extensions)
    for title in BLOCKS:
        assert f'<span class="filename">{title}</span>' in html, title
    assert html.count("<pre") == len(fenced_blocks(text))  # every fence became a code block


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff is not installed")
def test_the_model_file_is_lint_clean_at_its_path() -> None:
    code = titled_blocks(PAGE.read_text())["raterstats/models/latent_class/zencrowd.py"]
    path = "raterstats/models/latent_class/zencrowd.py"
    for command in (["check"], ["format", "--check"]):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--stdin-filename", path, "-"],
            input=code,
            capture_output=True,
            text=True,
            cwd=REPO,
            check=False,
        )
        assert result.returncode == 0, f"ruff {' '.join(command)}:\n{result.stdout}"


def test_the_walkthrough_runs(tmp_path: Path) -> None:
    blocks = titled_blocks(PAGE.read_text())
    for title, name in BLOCKS.items():
        (tmp_path / name).write_text(blocks[title])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    result = subprocess.run(
        [sys.executable, str(RUNNER), str(tmp_path), MODULE],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=600,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert "the page's tests: ok" in result.stdout
