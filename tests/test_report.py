"""The HTML report: one self-contained file from the demo's results folder, checked as
written and as rendered by a headless Chromium (Debian's ``chromium`` package), and the
methods paragraph of fits."""

from __future__ import annotations

import base64
import html
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from raterstats.report import methods_paragraph, report

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_IMG = re.compile(r'<img src="(?P<src>[^"]*)" alt="(?P<alt>[^"]*)"')


@pytest.fixture(scope="module")
def demo_html(demo_run) -> Path:
    """The HTML report the demo wrote (short fits; the fixture is shared with test_demo)."""
    path = demo_run.out / "report.html"
    assert path in demo_run.files
    return path


def _images(page: str) -> list[tuple[str, str]]:
    return [(m.group("src"), m.group("alt")) for m in _IMG.finditer(page)]


def test_every_figure_is_embedded_as_a_png_data_uri(demo_html):
    page = demo_html.read_text()
    images = _images(page)
    pngs = sorted(p.name for p in demo_html.parent.glob("*.png"))
    assert pngs, "the demo wrote no figure"
    assert len(images) == len(pngs) == page.count("<img ")
    for src, alt in images:
        assert src.startswith("data:image/png;base64,")
        raw = base64.b64decode(src.split(",", 1)[1], validate=True)
        assert raw.startswith(PNG_MAGIC)
        assert alt
    # the embedded bytes are the files' bytes
    embedded = {base64.b64decode(src.split(",", 1)[1]) for src, _ in images}
    assert embedded == {(demo_html.parent / n).read_bytes() for n in pngs}
    # the figures the report promises (the budget curves: the slow demo test)
    alts = {html.unescape(alt) for _, alt in images}
    for figure in (
        "Randolph's kappa by dimension and scheme",  # agreement, bar chart with intervals
        "System fair averages by design",  # the coarse-vs-fine figure
        "Rank probabilities",  # heatmap
        "Model-implied reliability by design",
        "Partial annotation",
    ):
        assert figure in alts, figure


def test_the_page_needs_no_other_file_to_show(demo_html):
    page = demo_html.read_text()
    assert "<script" not in page and "<link" not in page
    assert not re.search(r'src="(?!data:)', page)
    assert not re.search(r"(src|href)=\"https?://", page)


def test_tables_toc_and_csv_links(demo_html):
    md = (demo_html.parent / "report.md").read_text()
    page = demo_html.read_text()
    n_md_tables = len(re.findall(r"^\|[-| :]+\|$", md, flags=re.MULTILINE))
    assert n_md_tables > 0 and page.count("<table>") == n_md_tables
    toc = page.split('<nav class="toc"', 1)[1].split("</nav>", 1)[0]
    for anchor, _ in re.findall(r'<h2 id="([^"]+)">(.*?)</h2>', page):
        assert f'href="#{anchor}"' in toc
    for csv in demo_html.parent.glob("*.csv"):
        assert f'<a href="{csv.name}">' in page
    assert "<title>raterstats demo: the built-in clinical-QA study</title>" in page


def test_report_elsewhere_copies_the_tables_and_names_missing_figures(tmp_path):
    src = tmp_path / "results"
    src.mkdir()
    (src / "report.md").write_text(
        "# T\n\n## A\n\n![chart](a.png)\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n## Files\n\n"
        "- `t.csv`\n"
    )
    (src / "t.csv").write_text("x,y\n1,2\n")
    with pytest.raises(FileNotFoundError, match=r"'a\.png'"):
        report(src)
    (src / "a.png").write_bytes(PNG_MAGIC + b"0" * 8)
    (src / "b.png").write_bytes(PNG_MAGIC + b"1" * 8)  # not referenced: still shown
    out = report(src, out=tmp_path / "site" / "index.html", methods="Fitted by *nothing*.")
    page = out.read_text()
    assert (tmp_path / "site" / "t.csv").read_text() == "x,y\n1,2\n"
    assert [alt for _, alt in _images(page)] == ["chart", "b"]
    # Methods and Further figures come before Files
    order = [page.index(f'id="{h}"') for h in ("a", "methods", "further-figures", "files")]
    assert order == sorted(order)
    assert "<em>nothing</em>" in page


def test_methods_paragraph_states_what_the_fits_hold():
    from raterstats import MACE
    from raterstats.agreement import agreement
    from raterstats.simulate import archehr_like_study

    r = archehr_like_study(n_cases=4, n_systems=3, random_seed=1).ratings.filter(
        dimension="answers_question"
    )
    em = MACE().fit(r, method="em", random_seed=5, progress=False)
    nuts = MACE().fit(r, draws=30, tune=30, chains=2, random_seed=6, progress=False)
    ds = agreement(r, ["randolph_kappa", "krippendorff_alpha"], n_boot=20, random_seed=7)
    text = methods_paragraph({"EM": em, "NUTS": nuts}, agreement=ds)
    assert "**EM**: MACE" in text and "**NUTS**: MACE" in text
    assert "competence ~ Beta(alpha=0.5, beta=0.5)" in text
    assert "expectation-maximisation" in text and "random seed 5" in text
    stats = nuts["sample_stats"].attrs
    assert (
        f"2 chains x 30 draws after 30 tuning steps, target acceptance 0.8, random seed 6"
        f"; {int(nuts['sample_stats']['diverging'].sum())} divergent transitions" in text
    )
    assert f"nutpie {stats['inference_library_version']}" in text
    assert f"ArviZ {stats['creation_library_version']}" in text
    assert f"raterstats {nuts.attrs['raterstats_version']}" in text
    assert nuts.attrs["data_fingerprint"][:16] in text
    assert "randolph kappa, krippendorff alpha; 95% intervals" in text
    assert "20 replicates, random seed 7" in text
    for ref in ("Hovy, D., Berg", "Hoffman, M. D.", "Randolph, J. J.", "Krippendorff, K."):
        assert text.count(ref) == 1, ref
    with pytest.raises(ValueError, match="at least one fit"):
        methods_paragraph([])
    with pytest.raises(TypeError, match=r"expected an xr\.DataTree"):
        methods_paragraph([ds])  # type: ignore[list-item]


# ----------------------------------------------------------------------------- Chromium


def _browser() -> str | None:
    candidates = [os.environ.get("RATERSTATS_CHROMIUM", "")]
    candidates += ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]
    for c in candidates:
        path = shutil.which(c) if c else None
        if path:
            return path
    return None


BROWSER = _browser()
needs_browser = pytest.mark.skipif(
    BROWSER is None,
    reason="no Chromium found (install Debian's `chromium` package, as .ci/run does, or set "
    "RATERSTATS_CHROMIUM=/path/to/chrome)",
)

_PROBE = """<script>
window.__errors = [];
window.addEventListener("error", function (e) {
  window.__errors.push(e.message || ("failed to load " + (e.target && e.target.src)));
}, true);
window.addEventListener("load", function () {
  var imgs = Array.prototype.slice.call(document.images);
  var out = {
    images: imgs.length,
    decoded: imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length,
    tables: document.querySelectorAll("table").length,
    errors: window.__errors
  };
  var p = document.createElement("pre");
  p.id = "probe-result";
  p.textContent = JSON.stringify(out);
  document.body.appendChild(p);
});
</script>"""


def _chromium(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    assert BROWSER is not None
    cmd = [
        BROWSER,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def _page_errors(stderr: str) -> list[str]:
    """Console errors, uncaught exceptions and failed loads that Chromium logs."""
    bad = re.compile(r"Uncaught|CONSOLE\(\d+\).*(error|Error)|Failed to load|net::ERR_")
    return [line for line in stderr.splitlines() if bad.search(line)]


@needs_browser
def test_the_report_renders_in_headless_chromium(demo_html):
    t0 = time.perf_counter()
    ARTIFACTS.mkdir(exist_ok=True)
    page = demo_html.read_text()
    n_png = len(list(demo_html.parent.glob("*.png")))

    # 1. the page as written: a screenshot (kept) and no console error or failed load
    shot = ARTIFACTS / "report.png"
    shot.unlink(missing_ok=True)
    res = _chromium("--window-size=1280,3000", f"--screenshot={shot}", demo_html.as_uri())
    assert shot.is_file(), res.stderr[-2000:]
    assert shot.read_bytes().startswith(PNG_MAGIC) and shot.stat().st_size > 10_000
    assert not _page_errors(res.stderr), _page_errors(res.stderr)

    # 2. the same page with a probe script: every image decoded, no error event
    probe = demo_html.with_name("report-probe.html")
    probe.write_text(page.replace("<head>", "<head>\n" + _PROBE, 1))
    res = _chromium("--virtual-time-budget=10000", "--dump-dom", probe.as_uri())
    m = re.search(r'<pre id="probe-result">(.*?)</pre>', res.stdout)
    assert m, f"the probe did not run; stderr: {res.stderr[-2000:]}"
    result = json.loads(m.group(1).replace("&quot;", '"'))
    assert result["errors"] == []
    assert result["images"] == result["decoded"] == n_png
    assert result["tables"] == page.count("<table>")
    assert not _page_errors(res.stderr), _page_errors(res.stderr)
    (ARTIFACTS / "report-check.json").write_text(
        json.dumps({**result, "browser": BROWSER, "seconds": time.perf_counter() - t0})
    )
    shutil.copy2(demo_html, ARTIFACTS / "report.html")
