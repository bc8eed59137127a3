"""mkdocs hook: the API reference page (``api.md``), generated from ``raterstats.__all__``.

Every public name gets a mkdocstrings block (``::: raterstats.<name>``), grouped by the
module that defines it, so the page always lists exactly the exported API; the rest of the
ranking and design modules, the agreement statistics, the ordinal-model helpers, the report
and the figures follow as modules (each name documented once).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from mkdocs.structure.files import File, Files

#: Section title per defining module (others: the module name).
SECTIONS = {
    "raterstats.ingest": "Reading ratings",
    "raterstats.ratings": "Ratings",
    "raterstats.ingest_errors": "Reading ratings",
    "raterstats.provenance": "Ratings",
    "raterstats.ratings_summary": "Ratings",
    "raterstats.scales": "Scales and scale maps",
    "raterstats.comparisons": "Comparative judgments",
    "raterstats.comparisons_ingest": "Comparative judgments",
    "raterstats.models": "Models",
    "raterstats.posterior": "After fitting: posteriors",
    "raterstats.diagnostics": "After fitting: diagnostics",
    "raterstats.health": "After fitting: diagnostics",
    "raterstats.ranking": "Rankings",
    "raterstats.design": "Designs",
    "raterstats.report": "Report",
    "raterstats.analyze": "The whole analysis",
}

#: Modules documented as a whole after the exported names, with the members to show.
MODULES = {
    "raterstats.health": "The health of a fit and of its results (raterstats.health)",
    "raterstats.ppc_readout": "Posterior predictive checks in words (raterstats.ppc_readout)",
    "raterstats.ranking": "More on rankings (raterstats.ranking)",
    "raterstats.comparison_baselines": (
        "Classical baselines for comparative judgments (raterstats.comparison_baselines)"
    ),
    "raterstats.simulate_comparisons": "Simulated comparisons (raterstats.simulate_comparisons)",
    "raterstats.simulate_kinds": (
        "One study judged three ways: absolute, pairs, rankings (raterstats.simulate_kinds)"
    ),
    "raterstats.simulate_crowds": (
        "Hard crowds: sparse raters, communities, spammers (raterstats.simulate_crowds)"
    ),
    "raterstats.design": "More on designs (raterstats.design)",
    "raterstats.agreement": "Agreement statistics (raterstats.agreement)",
    "raterstats.models.ordinal": "Ordinal model helpers (raterstats.models.ordinal)",
    "raterstats.report": "HTML report and methods paragraph (raterstats.report)",
    "raterstats.report_tables": "Tables fitted to the report's page (raterstats.report_tables)",
    "raterstats.plots": "Figures (raterstats.plots)",
}


def _section(module: str) -> str:
    for prefix, title in SECTIONS.items():
        if module == prefix or module.startswith(prefix + "."):
            return title
    return module


def _module_members(name: str) -> list[str]:
    mod = importlib.import_module(name)
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [
            n
            for n, obj in vars(mod).items()
            if not n.startswith("_")
            and inspect.isfunction(obj)
            and getattr(obj, "__module__", "") == name
        ]
    return [n for n in names if callable(getattr(mod, n, None))]


def api_markdown() -> str:
    import raterstats

    groups: dict[str, list[str]] = {}
    for name in raterstats.__all__:
        obj = getattr(raterstats, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        groups.setdefault(_section(getattr(obj, "__module__", "raterstats")), []).append(name)
    lines = [
        "# API reference",
        "",
        "Generated from `raterstats.__all__` (the public API), grouped by the module that "
        "defines each name, then the other functions of the ranking and design modules, "
        "the agreement statistics, the ordinal-model helpers, the report and the figures.",
        "",
    ]
    for title, names in groups.items():
        lines += [f"## {title}", ""]
        for n in names:
            lines += [f"::: raterstats.{n}", ""]
    for module, title in MODULES.items():
        # what is exported is documented above, once
        members = [m for m in _module_members(module) if m not in raterstats.__all__]
        if not members:
            continue
        lines += [f"## {title}", "", f"::: {module}", "    options:", "      members:"]
        lines += [f"        - {m}" for m in members]
        lines += ["      show_root_heading: false", ""]
    return "\n".join(lines)


def on_files(files: Files, config: Any) -> Files:
    if files.get_file_from_path("api.md") is None:
        files.append(File.generated(config, "api.md", content=api_markdown()))
    return files
