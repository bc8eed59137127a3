"""The runnable examples (examples/*.py): each runs as a standalone script, in a subprocess
with the repository on PYTHONPATH, exits 0 and prints its key result.

Every example found is run (slow tests); scripts on real data print ``skipped: ...`` and exit
0 when ``../shared/data`` is absent, and the test is then skipped with that reason.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
SHARED = ROOT.parent / "shared" / "data"

#: Short settings and the key output of the examples this suite knows; an example not
#: listed runs with no arguments and must exit 0 with some output.
SETTINGS: dict[str, tuple[list[str], list[str]]] = {
    "clinical_qa_demo.py": (
        ["--draws", "50", "--n-boot", "100"],
        [
            "Randolph's kappa among the physicians",
            "MACE competence per rater",
            "System fair averages",
            "Model-implied reliability by design",
            "report written to",
        ],
    ),
    "snow_rte.py": ([], ["gold accuracy: majority vote"]),
    "anaesthesia.py": (
        ["--draws", "300"],
        ["Class prevalences", "Confusion matrix of anaesthetist 5"],
    ),
    "dialsummeval_ordinal.py": (["--draws", "100"], ["Kendall tau-b"]),
    "archehr_rankings.py": (
        ["--repeats", "2"],
        ["Ranking concordance (Kendall tau-b)", "MACE rankings from fewer raters"],
    ),
    "comparisons_tutorial.py": ([], ["### squality-fit", "### judge-replicates", "### designs"]),
}
#: issue 20: the tutorial page that quotes comparisons_tutorial.py's output blocks
COMPARISONS_PAGE = ROOT / "docs" / "tutorials" / "comparisons.md"
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def page_blocks(text: str) -> dict[str, list[str]]:
    """The page's ``<!-- output: NAME -->`` ... ``<!-- /output -->`` blocks: their
    non-empty lines, code fences left out."""
    blocks = {}
    for m in re.finditer(r"<!-- output: (\S+) -->\n(.*?)<!-- /output -->", text, re.S):
        lines = [ln.strip() for ln in m.group(2).splitlines()]
        blocks[m.group(1)] = [ln for ln in lines if ln and not ln.startswith("```")]
    return blocks


def script_blocks(out: str) -> dict[str, list[str]]:
    """The script's ``### NAME`` blocks: their non-empty lines."""
    blocks: dict[str, list[str]] = {}
    name = None
    for line in out.splitlines():
        if line.startswith("### "):
            name = line[4:].strip()
            blocks[name] = []
        elif name is not None and line.strip():
            blocks[name].append(line.strip())
    return blocks


def same_line(quoted: str, printed: str) -> bool:
    """The same text, up to spacing and table padding, with numbers equal up to the Monte
    Carlo noise of another machine (5% or 0.02)."""

    def norm(s: str) -> str:
        return re.sub(r"-{3,}", "---", re.sub(r"\s+", " ", s))

    q, p = norm(quoted), norm(printed)
    if _NUMBER.sub("#", q) != _NUMBER.sub("#", p):
        return False
    pairs = zip(_NUMBER.findall(q), _NUMBER.findall(p), strict=True)
    return all(abs(float(a) - float(b)) <= 0.02 + 0.05 * abs(float(b)) for a, b in pairs)


def check_page(out: str) -> None:
    """Every output block of the comparisons tutorial is printed by the script, and its
    lines appear there in order (a block may leave lines out)."""
    printed = script_blocks(out)
    for name, lines in page_blocks(COMPARISONS_PAGE.read_text()).items():
        assert name in printed, f"comparisons.md quotes a block {name!r} the script lacks"
        rest = iter(printed[name])
        for line in lines:
            assert any(same_line(line, p) for p in rest), (
                f"comparisons.md, block {name!r}: {line!r} is not what "
                "examples/comparisons_tutorial.py prints now (in order); re-run it and update "
                f"the page:\n" + "\n".join(printed[name])
            )


def run(script: Path, args: list[str], tmp_path: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    res = subprocess.run(
        [sys.executable, str(script), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
        check=False,
    )
    assert res.returncode == 0, f"{script.name} failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    if res.stdout.startswith("skipped:"):
        pytest.skip(f"{script.name}: {res.stdout.strip()}")
    return res.stdout


def test_comparisons_page_quotes_the_script():
    """issue 20: the tutorial's output blocks name blocks the script prints, and the
    comparison of quoted and printed lines accepts noise but not other numbers."""
    blocks = page_blocks(COMPARISONS_PAGE.read_text())
    source = (ROOT / "examples" / "comparisons_tutorial.py").read_text()
    assert len(blocks) >= 10
    for name, lines in blocks.items():
        assert f'"{name}"' in source, name
        assert lines, name
    assert same_line("| w8 | 2.08 [1.32, 3.46] | 225 |", "| w8    | 2.09 [1.32, 3.45]   | 225 |")
    assert not same_line("| w8 | 2.08 [1.32, 3.46] | 225 |", "| w8 | 2.50 [1.32, 3.46] | 225 |")
    assert not same_line("OK: 4 chain(s)", "PROBLEMS: 4 chain(s)")


def test_examples_are_found_and_documented():
    names = [p.name for p in EXAMPLES]
    for known in ("clinical_qa_demo.py", "snow_rte.py", "anaesthesia.py"):
        assert known in names
    for path in EXAMPLES:
        tree = ast.parse(path.read_text())
        doc = ast.get_docstring(tree)
        assert doc and "Run:" in doc, f"{path.name}: the docstring should say how to run it"
        assert 'if __name__ == "__main__":' in path.read_text(), path.name


@pytest.mark.slow
@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(script, tmp_path):
    args, expected = SETTINGS.get(script.name, ([], []))
    out = run(script, args, tmp_path)
    assert out.strip(), f"{script.name} printed nothing"
    for text in expected:
        assert text in out, f"{script.name}: {text!r} not in its output"
    if script.name == "clinical_qa_demo.py":
        html = Path(re.search(r"report written to (\S+)", out).group(1))
        page = html.read_text()
        assert page.count('<img src="data:image/png;base64,') == 1
        assert "Hovy et al. 2013" in page and "Randolph, J. J." in page
    if script.name == "comparisons_tutorial.py":
        check_page(out)
    if script.name == "snow_rte.py":
        # the converter's own majority-vote accuracy (stats.json) is the oracle
        stats = json.loads((SHARED / "snow2008_rte" / "stats.json").read_text())
        mv = float(re.search(r"majority vote (\d\.\d+)", out).group(1))
        assert mv == pytest.approx(stats["mv_accuracy_vs_gold"], abs=5e-5)
        best = float(re.search(r"best model (\d\.\d+)", out).group(1))
        assert best > mv
    if script.name == "anaesthesia.py":
        gap = float(re.search(r"published prevalences: (\d\.\d+)", out).group(1))
        assert gap < 0.03  # rater's posterior means, with its (different) default priors
