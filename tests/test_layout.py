"""The package's layout rules (docs/contributing.md, "Layout"), checked on the source:

- no module of the package is over 800 lines;
- no underscore name crosses a module boundary: no import of a private module
  (``raterstats.x._y``) nor of a private name (``from m import _f``), anywhere in the
  package, its tests, examples or benchmarks;
- outside a sub-package (``raterstats.models.latent_class``, ``raterstats.design``, ...)
  code imports that sub-package's ``__init__``, never one of its modules;
- imports point down the layers of the drawing in docs/contributing.md, never back up
  (function-level and ``TYPE_CHECKING`` imports count too);
- no code outside the model registry branches on a model's name: post-fit behaviour is
  chosen by the model class (``Model.rater_summary`` and friends), never by comparing
  ``dt.attrs["model"]`` with ``"mace"``.

Each check parses the files (no import), so it is fast and names the file and line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "raterstats"
MAX_LINES = 800

#: layer of each module (dotted prefix; the longest match wins). A module imports only from
#: its own layer or lower ones.
LAYERS: dict[str, int] = {
    "raterstats.version": 0,
    "raterstats.lazy": 0,
    "raterstats.threads": 0,
    "raterstats.schema": 0,
    "raterstats.defaults": 0,
    "raterstats.checks": 0,
    "raterstats.inference_checks": 0,
    "raterstats.intervals": 0,
    "raterstats.convergence": 0,
    "raterstats.formatting": 0,
    "raterstats.ingest_errors": 0,
    "raterstats.provenance": 0,
    "raterstats.files": 0,
    "raterstats.ppc_readout": 0,
    "raterstats.scales": 1,
    "raterstats.rating_arrays": 2,
    "raterstats.recode": 2,
    "raterstats.ratings": 2,
    "raterstats.ratings_summary": 2,
    "raterstats.delimited": 2,
    "raterstats.readers": 2,
    "raterstats.repeats": 2,
    "raterstats.roles": 2,
    "raterstats.ingest": 2,
    "raterstats.comparisons": 2,
    "raterstats.comparisons_ingest": 2,
    "raterstats.exports": 2,
    "raterstats.datasets": 3,
    "raterstats.simulate": 3,
    "raterstats.simulate_schemes": 3,
    "raterstats.simulate_comparisons": 3,
    "raterstats.simulate_kinds": 3,
    "raterstats.simulate_crowds": 3,
    "raterstats.simulate_ordinal": 3,
    "raterstats.scoring": 3,
    "raterstats.comparison_baselines": 3,
    "raterstats.agreement": 4,
    "raterstats.nutpie_callbacks": 5,
    "raterstats.inference": 5,
    "raterstats.nutpie_run": 5,
    "raterstats.inference_vi": 5,
    "raterstats.models": 6,
    "raterstats.health": 6,
    "raterstats.posterior": 7,
    "raterstats.diagnostics": 7,
    "raterstats.choice": 7,
    "raterstats.ranking": 7,
    "raterstats.ranking_concordance": 7,
    "raterstats.descriptive": 8,
    "raterstats.design": 8,
    "raterstats.plots": 9,
    "raterstats.report": 10,
    "raterstats.report_tables": 10,
    "raterstats.demo": 10,
    "raterstats.analyze": 10,
    "raterstats.cli": 11,
}

#: sub-packages whose modules only their own package imports
SUBPACKAGES = (
    "raterstats.models.latent_class",
    "raterstats.models.ordinal",
    "raterstats.models.comparisons",
    "raterstats.design",
    "raterstats.analyze",
)


def _modules(*roots: Path) -> Iterator[tuple[Path, str]]:
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if ".venv" in path.parts:
                continue
            rel = path.relative_to(REPO).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield path, ".".join(parts)


_SUBMODULES = {m for _, m in _modules(PACKAGE)}


def _imports(tree: ast.AST, module: str, is_pkg: bool) -> Iterator[tuple[int, str, list[str]]]:
    """(line, absolute module, imported names) of every import in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_pkg else 0)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names = [a.name for a in node.names]
            subs = [n for n in names if f"{target}.{n}" in _SUBMODULES]
            for n in subs:  # `from raterstats import schema`: the module raterstats.schema
                yield node.lineno, f"{target}.{n}", []
            rest = [n for n in names if n not in subs]
            if rest or not subs:
                yield node.lineno, target, rest


def _private(name: str) -> bool:
    """``_x`` is private; dunders (``__version__``) are not."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _layer(module: str) -> int | None:
    best = None
    for prefix, layer in LAYERS.items():
        if (module == prefix or module.startswith(prefix + ".")) and (
            best is None or len(prefix) > len(best[0])
        ):
            best = (prefix, layer)
    return None if best is None else best[1]


def _parsed(roots: tuple[Path, ...]) -> Iterator[tuple[Path, str, ast.AST, bool]]:
    for path, module in _modules(*roots):
        yield path, module, ast.parse(path.read_text(), str(path)), path.name == "__init__.py"


def test_no_module_over_800_lines() -> None:
    counts = {
        str(p.relative_to(REPO)): len(p.read_text().splitlines()) for p, _ in _modules(PACKAGE)
    }
    long = {p: n for p, n in counts.items() if n > MAX_LINES}
    assert long == {}, f"modules over {MAX_LINES} lines: {long}"


@pytest.mark.parametrize("root", ["raterstats", "tests", "examples", "benchmarks", "docs"])
def test_no_underscore_name_crosses_a_module_boundary(root: str) -> None:
    bad = []
    for path, module, tree, is_pkg in _parsed((REPO / root,)):
        for line, target, names in _imports(tree, module, is_pkg):
            if target == "__future__" or not target.startswith("raterstats"):
                continue
            private_mod = [p for p in target.split(".") if _private(p)]
            private_names = [n for n in names if _private(n)]
            if private_mod or private_names:
                bad.append(f"{path.relative_to(REPO)}:{line}: {target} {private_names or ''}")
    assert bad == [], "private names imported across modules:\n" + "\n".join(bad)


def test_subpackage_modules_are_imported_only_inside_their_package() -> None:
    bad = []
    roots = tuple(REPO / r for r in ("raterstats", "tests", "examples", "benchmarks"))
    for path, module, tree, is_pkg in _parsed(roots):
        for line, target, names in _imports(tree, module, is_pkg):
            for pkg in SUBPACKAGES:
                inside = module == pkg or module.startswith(pkg + ".")
                deep = target.startswith(pkg + ".") or (
                    target == pkg and any(f"{pkg}.{n}" in _SUBMODULES for n in names)
                )
                if deep and not inside and not _is_test_of(module):
                    bad.append(f"{path.relative_to(REPO)}:{line}: {target} {names}")
    assert bad == [], "modules of a sub-package imported from outside it:\n" + "\n".join(bad)


def _is_test_of(module: str) -> bool:
    """Tests of a sub-package's kernels may reach its modules (they test them one by one)."""
    return module.startswith("tests.")


def test_imports_point_down_the_layers() -> None:
    bad = []
    for path, module, tree, is_pkg in _parsed((PACKAGE,)):
        if module == "raterstats":
            continue  # the public facade re-exports from every layer
        own = _layer(module)
        assert own is not None, f"{module} has no layer in tests/test_layout.py::LAYERS"
        for line, target, _ in _imports(tree, module, is_pkg):
            if not target.startswith("raterstats.") and target != "raterstats":
                continue
            theirs = _layer(target) if target != "raterstats" else 99
            if theirs is not None and theirs > own:
                bad.append(
                    f"{path.relative_to(REPO)}:{line}: {module} (layer {own}) imports "
                    f"{target} (layer {theirs})"
                )
    assert bad == [], "imports back up the layers:\n" + "\n".join(bad)


def _model_names() -> set[str]:
    from raterstats.models import registered_models

    # canonical names (and their hyphenated spellings); a short alias such as the CLI's
    # "ordinal" is also an everyday word (a scale kind, Krippendorff's level)
    names = set()
    for name in registered_models():
        names.update({name, name.replace("_", "-")})
    return names


def _str_consts(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    return []


def test_no_branch_on_a_model_name_outside_the_registry() -> None:
    names = _model_names()
    bad = []
    for path, _module, tree, _ in _parsed((PACKAGE,)):
        if path == PACKAGE / "models" / "base.py":
            continue
        for node in ast.walk(tree):
            hits: list[str] = []
            if isinstance(node, ast.Compare):
                # `x == "mace"`, `model in ("mace", "dawid_skene")`; a constant *looked up*
                # in a container (`"length_effect" in posterior`) names a variable instead
                for op, right in zip(node.ops, node.comparators, strict=True):
                    if isinstance(op, ast.In | ast.NotIn):
                        hits += _str_consts(right) if not isinstance(right, ast.Constant) else []
                    elif isinstance(op, ast.Eq | ast.NotEq):
                        hits += _str_consts(right) + _str_consts(node.left)
            elif isinstance(node, ast.Dict):
                keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
                if len([k for k in keys if k in names]) >= 2:
                    hits += keys
            elif isinstance(node, ast.MatchValue):
                hits += _str_consts(node.value)
            found = sorted({h for h in hits if h in names})
            if found:
                bad.append(f"{path.relative_to(REPO)}:{node.lineno}: {found}")
    assert bad == [], "branches on model names outside the registry:\n" + "\n".join(bad)


def test_abstract_bases_do_not_register() -> None:
    from raterstats.models import Model, registered_models
    from raterstats.models.latent_class import LatentClassModel

    assert LatentClassModel not in registered_models().values()
    assert Model not in registered_models().values()
    assert all(not cls.abstract for cls in registered_models().values())
