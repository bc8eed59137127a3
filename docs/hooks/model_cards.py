"""mkdocs hook: the model cards (``models/<name>/card.md`` at the repository root) become
the pages ``models/<name>.md`` of the documentation, without copying them, and the
"Model cards" section of the navigation lists them all.

Each card's YAML front matter (parameters, default priors, options, methods) is what
``tests/test_registry.py`` and ``tests/models/test_cards.py`` check against the code; the
hook renders it as tables at the end of the page, so the documentation shows exactly the
checked values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
CARDS = ROOT / "models"


def _title(card: Path) -> str:
    """The card's first heading up to its colon (``# MACE: ...`` -> ``MACE``)."""
    for line in card.read_text().splitlines():
        if line.startswith("# "):
            return line[2:].split(":", 1)[0].strip()
    return card.parent.name


def on_config(config: Any) -> Any:
    """The "Model cards" section of the navigation lists every card, so that a new model's
    card appears without an edit of ``mkdocs.yml``."""
    cards = [{_title(c): f"models/{c.parent.name}.md"} for c in sorted(CARDS.glob("*/card.md"))]
    for entry in config["nav"] or []:
        if isinstance(entry, dict) and "Model cards" in entry:
            entry["Model cards"] = cards
    return config


def on_files(files: Files, config: Any) -> Files:
    for card in sorted(CARDS.glob("*/card.md")):
        uri = f"models/{card.parent.name}.md"
        if files.get_file_from_path(uri) is None:
            files.append(File.generated(config, uri, abs_src_path=str(card)))
    return files


def _cell(v: Any) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k}={val}" for k, val in v.items())
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    return str(v).replace("|", "\\|")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    if not page.file.src_uri.startswith("models/"):
        return markdown
    meta = page.meta or {}
    out = [markdown.rstrip(), "", "## From the card's front matter", ""]
    out.append(
        f"Class `{meta.get('class', '?')}`, model name `{meta.get('model', '?')}` "
        f"(`dt.attrs['model']`); methods: {_cell(meta.get('methods', []))}. The test suite "
        "checks these lists against the code."
    )
    if meta.get("parameters"):
        out += ["", "| parameter | meaning |", "|---|---|"]
        out += [f"| `{k}` | {_cell(v)} |" for k, v in meta["parameters"].items()]
    if meta.get("priors"):
        out += ["", "| prior | distribution | parameters |", "|---|---|---|"]
        for k, v in meta["priors"].items():
            v = dict(v)
            dist = v.pop("dist", "?")
            out.append(f"| `{k}` | {dist} | {_cell(v)} |")
    if meta.get("options"):
        out += ["", "| option | default |", "|---|---|"]
        out += [f"| `{k}` | `{v}` |" for k, v in meta["options"].items()]
    return "\n".join(out) + "\n"
