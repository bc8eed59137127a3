"""One self-contained HTML report from a results folder, and the methods paragraph of fits.

:func:`report` lays out what an analysis already wrote — a ``report.md`` with its PNG figures
and CSV tables, as ``raterstats demo`` writes them — as one HTML file: the figures embedded
as ``data:`` URIs, the Markdown tables rendered, a table of contents and a small stylesheet;
the CSV tables stay beside it. :func:`methods_paragraph` states, from the attributes a fit
carries, the models, priors, sampler settings, versions, seeds and data fingerprints, with
references. Neither computes a new number.
"""

from __future__ import annotations

import base64
import html
import json
import re
import secrets
import shutil
import struct
import urllib.parse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import xarray as xr

from raterstats.defaults import AGREEMENT_CONFIDENCE, SAMPLER
from raterstats.files import write_atomic
from raterstats.formatting import escape_markdown, visible
from raterstats.report_tables import fit_tables, table_html

__all__ = ["STATISTIC_REFERENCES", "methods_paragraph", "report"]

#: Reference of each classical agreement statistic (names of ``raterstats.agreement``).
STATISTIC_REFERENCES: dict[str, str] = {
    "percent_agreement": "",
    "cohen_kappa": "Cohen, J. (1960). A coefficient of agreement for nominal scales. "
    "Educational and Psychological Measurement 20(1), 37-46. "
    "https://doi.org/10.1177/001316446002000104",
    "conger_kappa": "Conger, A. J. (1980). Integration and generalization of kappas for "
    "multiple raters. Psychological Bulletin 88(2), 322-328. "
    "https://doi.org/10.1037/0033-2909.88.2.322",
    "fleiss_kappa": "Fleiss, J. L. (1971). Measuring nominal scale agreement among many "
    "raters. Psychological Bulletin 76(5), 378-382. https://doi.org/10.1037/h0031619",
    "scott_pi": "Scott, W. A. (1955). Reliability of content analysis: the case of nominal "
    "scale coding. Public Opinion Quarterly 19(3), 321-325. https://doi.org/10.1086/266577",
    "randolph_kappa": "Randolph, J. J. (2005). Free-marginal multirater kappa: an alternative "
    "to Fleiss' fixed-marginal multirater kappa. Joensuu Learning and Instruction Symposium.",
    "gwet_ac1": "Gwet, K. L. (2008). Computing inter-rater reliability and its variance in "
    "the presence of high agreement. British Journal of Mathematical and Statistical "
    "Psychology 61(1), 29-48. https://doi.org/10.1348/000711006X126600",
    "gwet_ac2": "Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed. Advanced "
    "Analytics.",
    "krippendorff_alpha": "Krippendorff, K. (2004). Content Analysis: An Introduction to Its "
    "Methodology, 2nd ed., ch. 11. Sage.",
    "icc": "Shrout, P. E., & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing "
    "rater reliability. Psychological Bulletin 86(2), 420-428. "
    "https://doi.org/10.1037/0033-2909.86.2.420",
    "kendall_w": "Kendall, M. G., & Babington Smith, B. (1939). The problem of m rankings. "
    "Annals of Mathematical Statistics 10(3), 275-287. https://doi.org/10.1214/aoms/1177732186",
    "intra_rater_agreement": "",
}

_SAMPLER_REFERENCES = {
    "nutpie": "nutpie (Seyboldt et al.; https://github.com/pymc-devs/nutpie)",
    "pymc": "PyMC's NUTS (Abril-Pla et al. 2023, PeerJ Computer Science 9:e1516, "
    "https://doi.org/10.7717/peerj-cs.1516)",
    "numpyro": "NumPyro's NUTS (Phan, Pradhan & Jankowiak 2019, arXiv:1912.11554)",
}
_NUTS_REFERENCE = (
    "Hoffman, M. D., & Gelman, A. (2014). The No-U-Turn Sampler. JMLR 15, 1593-1623. "
    "https://jmlr.org/papers/v15/hoffman14a.html"
)


# ----------------------------------------------------------------------------- methods


def _fmt_number(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _fmt_prior(name: str, spec: Mapping[str, Any]) -> str:
    dist = spec.get("dist", "?")
    params = ", ".join(f"{k}={_fmt_number(v)}" for k, v in spec.items() if k != "dist")
    return f"{name} ~ {dist}({params})"


def _checkpoints(dt: xr.DataTree) -> list[int]:
    """The checkpoints of a fit whose draws were set by its checks (empty: fixed draws)."""
    attrs = dt["posterior"].attrs if "posterior" in dt.children else {}
    try:
        planned = json.loads(str(attrs["checkpoints_planned"]))
        return [int(d) for d in planned]
    except (KeyError, TypeError, ValueError):
        return []


def _loads(text: Any) -> dict[str, Any]:
    if isinstance(text, Mapping):
        return dict(text)
    try:
        out = json.loads(str(text))
    except (TypeError, ValueError):
        return {}
    return out if isinstance(out, dict) else {}


def _fit_sentence(label: str | None, dt: xr.DataTree) -> tuple[str, list[str]]:
    attrs = dict(dt.attrs)
    name = str(attrs.get("model", ""))
    if not name:
        raise ValueError(
            f"fit {label or ''!s} has no 'model' attribute: methods_paragraph needs fits made "
            "by raterstats models (Model.fit), or such fits reloaded from netCDF"
        )
    from raterstats.models import model_class

    try:
        cls = model_class(name)
        described = cls.description or f"the model {escape_markdown(repr(name))}"
        refs_list = list(cls.references)
    except ValueError:
        described, refs_list = f"the model {escape_markdown(repr(name))}", []
    priors = _loads(attrs.get("priors", "{}"))
    options = {k: v for k, v in _loads(attrs.get("options", "{}")).items() if v is not None}
    head = f"**{escape_markdown(label)}**: " if label else ""
    parts = [f"{head}{described[0].upper()}{described[1:]}"]
    if options:
        parts[0] += " (options: " + ", ".join(
            escape_markdown(f"{k}={v}") for k, v in sorted(options.items())
        )
        parts[0] += ")"
    if priors:
        parts.append(
            "Priors: "
            + "; ".join(_fmt_prior(k, v) for k, v in sorted(priors.items()) if isinstance(v, dict))
        )
    method = str(attrs.get("method", ""))
    stats_attrs = dict(dt["sample_stats"].attrs) if "sample_stats" in dt.children else {}
    seed = escape_markdown(str(attrs.get("random_seed")))
    if method == "nuts":
        sampler = str(attrs.get("sampler", SAMPLER))
        settings = _loads(stats_attrs.get("inference_library_settings", "{}"))
        target = (
            settings.get("settings", {})
            .get("adapt_options", {})
            .get("step_size_settings", {})
            .get("target_accept")
        )
        lib = stats_attrs.get("inference_library")
        libv = stats_attrs.get("inference_library_version")
        text = (
            f"Fitted by the No-U-Turn sampler (Hoffman & Gelman 2014) of "
            f"{_SAMPLER_REFERENCES.get(sampler, escape_markdown(sampler))}"
            + (f" {escape_markdown(str(libv))}" if lib and libv and str(lib) == sampler else "")
            + f", {attrs.get('chains')} chains x {attrs.get('draws')} draws after "
            f"{attrs.get('tune')} tuning steps"
            + (f", target acceptance {target}" if target is not None else "")
            + f", random seed {seed}"
        )
        planned = _checkpoints(dt)
        if planned:
            text += (
                "; the number of draws was set by the fit's own convergence checks "
                "(R-hat, ESS, divergences and the model's own checks), looked at after "
                + ", ".join(f"{d:,}" for d in planned)
                + " draws per chain, stopping at the first that passed, or where divergences "
                "or a failed check of the model's own showed that more draws would not help"
            )
        if "diverging" in dt["sample_stats"].data_vars:
            n_div = int(dt["sample_stats"]["diverging"].sum())
            text += f"; {n_div} divergent transitions"
        parts.append(text)
        refs_list.append(_NUTS_REFERENCE)
    elif method == "em":
        try:
            restarts = json.loads(str(stats_attrs.get("restart_loglik", "[]")))
        except ValueError:
            restarts = []
        parts.append(
            "Point estimates (posterior mode) by expectation-maximisation"
            + (f", best of {len(restarts)} random restarts" if restarts else "")
            + f", random seed {seed}"
        )
    elif method == "gibbs":
        parts.append(
            "Fitted by a data-augmentation (Gibbs) sampler with the true labels augmented, "
            f"{attrs.get('chains')} chains x {attrs.get('draws')} draws after "
            f"{attrs.get('tune')} burn-in sweeps, random seed {seed}"
        )
    elif method == "map":
        parts.append(f"Posterior mode by numerical optimisation, random seed {seed}")
    elif method == "advi":
        parts.append(
            f"Mean-field ADVI approximation, {attrs.get('draws')} draws from it, random seed {seed}"
        )
    versions = [f"raterstats {escape_markdown(str(attrs.get('raterstats_version', '?')))}"]
    for key in ("creation_library", "inference_library"):
        lib = stats_attrs.get(key)
        ver = stats_attrs.get(f"{key}_version")
        if lib and ver and escape_markdown(f"{lib} {ver}") not in versions:
            versions.append(escape_markdown(f"{lib} {ver}"))
    parts.append("Software: " + ", ".join(versions))
    fp = str(attrs.get("data_fingerprint", ""))
    if fp:
        parts.append(f"Data fingerprint (SHA-256 of the ratings) {escape_markdown(fp[:16])}…")
    return ". ".join(parts) + ".", refs_list


def methods_paragraph(
    fits: Mapping[str, xr.DataTree] | Sequence[xr.DataTree] = (),
    *,
    agreement: xr.Dataset | None = None,
    references: bool = True,
) -> str:
    """The methods paragraph (Markdown) of fitted models and agreement statistics.

    Everything is read from what the results carry: a fit's ``attrs`` (model, priors,
    options, method, sampler, draws, tune, chains, seed, raterstats version, data
    fingerprint) and ``sample_stats`` attrs (sampler library, its version and settings,
    ArviZ version, divergences); an agreement Dataset's ``statistic`` coordinate and
    ``attrs`` (interval method, coverage, replicates, seed). Nothing is recomputed.

    Parameters
    ----------
    fits : mapping of str to xr.DataTree, or sequence of xr.DataTree
        Fits returned by ``Model.fit`` (or reloaded from netCDF); a mapping labels them.
    agreement : xr.Dataset, optional
        The result of :func:`raterstats.agreement.agreement`.
    references : bool
        Append the list of references.

    Returns
    -------
    str
        Markdown: one paragraph per fit (and one for the agreement statistics), then the
        references as a bullet list.

    Examples
    --------
    >>> from raterstats import DawidSkene
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=3, n_systems=4, random_seed=1).ratings
    >>> dt = DawidSkene().fit(r, method="em", random_seed=1)
    >>> text = methods_paragraph({"Dawid-Skene": dt})
    >>> "Dawid & Skene 1979" in text and "random seed 1" in text
    True
    """
    items = list(fits.items()) if isinstance(fits, Mapping) else [(None, f) for f in fits]
    paragraphs: list[str] = []
    refs: list[str] = []
    for label, dt in items:
        if not isinstance(dt, xr.DataTree):
            raise TypeError(
                f"fit {label or len(paragraphs)!s}: expected an xr.DataTree from Model.fit, "
                f"got {type(dt).__name__}"
            )
        text, fit_refs = _fit_sentence(label, dt)
        paragraphs.append(text)
        refs.extend(r for r in fit_refs if r not in refs)
    if agreement is not None:
        if "statistic" not in agreement.coords:
            raise ValueError(
                "agreement: expected the Dataset returned by raterstats.agreement.agreement "
                "(it has no 'statistic' coordinate)"
            )
        names = [str(s) for s in agreement["statistic"].values]
        a = agreement.attrs
        options = _loads(a.get("statistic_options", "{}"))
        shown = []
        for n in names:
            base = str(options.get(n, {}).get("name", n)) if isinstance(options, dict) else n
            shown.append(escape_markdown(n.replace("_", " ")))
            ref = STATISTIC_REFERENCES.get(base, "")
            if ref and ref not in refs:
                refs.append(ref)
        text = "Classical agreement: " + ", ".join(shown)
        if a.get("n_boot"):
            text += (
                f"; {100 * float(a.get('ci_prob', AGREEMENT_CONFIDENCE)):.0f}% intervals "
                f"({escape_markdown(str(a.get('interval', 'bootstrap')))}, "
                f"{escape_markdown(str(a.get('n_boot')))} replicates, "
                f"random seed {escape_markdown(str(a.get('random_seed')))})"
            )
        paragraphs.append(text + ".")
    if not paragraphs:
        raise ValueError("methods_paragraph needs at least one fit or an agreement Dataset")
    out = "\n\n".join(paragraphs)
    if references and refs:
        out += "\n\nReferences:\n\n" + "\n".join(f"- {r}" for r in refs)
    return out


# ----------------------------------------------------------------------------- report

_MIME = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".svg": "image/svg+xml",
    ".webp": "image/webp",
}
_IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
#: files of a results folder that its Files section links (figures, tables, data)
_LINKED_SUFFIXES = {".csv", ".tsv", ".json", ".nc", ".txt", ".toml", ".html", *_MIME}
_CODE_FILE = re.compile(
    r"(?<![\[\w])`(?P<name>[\w.\-]+\.(?:csv|tsv|json|nc|md|html|txt|toml|png|svg|jpe?g|gif|webp))`",
    re.IGNORECASE,
)
_FILES_HEADING = re.compile(r"^## Files\s*$", flags=re.MULTILINE)

_CSS = """
:root { --fg: #1d232a; --muted: #5b6570; --line: #d9dee3; --accent: #1f5f99; --bg: #ffffff;
        --zebra: #f5f7f9; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg);
       font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; }
.page { display: grid; grid-template-columns: 17rem minmax(0, 1fr); gap: 2.5rem;
        max-width: 82rem; margin: 0 auto; padding: 2rem 1.5rem 4rem; }
nav.toc { position: sticky; top: 1rem; align-self: start; max-height: calc(100vh - 2rem);
          overflow: auto; font-size: 0.9rem; border-right: 1px solid var(--line);
          padding-right: 1rem; }
nav.toc h2 { font-size: 0.8rem; text-transform: uppercase; letter-spacing: .06em;
             color: var(--muted); margin: 0 0 .5rem; }
nav.toc ul { list-style: none; padding-left: .8rem; margin: .2rem 0; }
nav.toc > div > ul { padding-left: 0; }
nav.toc a { color: var(--fg); text-decoration: none; }
nav.toc a:hover { color: var(--accent); text-decoration: underline; }
main { min-width: 0; }
h1 { font-size: 1.9rem; line-height: 1.25; margin-top: 0; }
h2 { font-size: 1.4rem; margin-top: 2.4rem; padding-bottom: .3rem;
     border-bottom: 1px solid var(--line); }
h3 { font-size: 1.12rem; margin-top: 1.8rem; }
a { color: var(--accent); }
code { font: 0.88em/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
       background: var(--zebra); padding: .05em .3em; border-radius: 3px; }
pre { background: var(--zebra); padding: .8rem 1rem; overflow-x: auto; border-radius: 4px; }
pre code { background: none; padding: 0; }
.table-wrap { overflow-x: auto; margin: 1rem 0 1.5rem; max-width: 100%; }
table { border-collapse: collapse; font-size: 0.86rem; font-variant-numeric: tabular-nums;
        max-width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: .3rem .65rem; text-align: left;
         vertical-align: top; overflow-wrap: break-word; }
td.nw { white-space: nowrap; }
th { background: #eef2f6; font-weight: 600; position: sticky; top: 0; }
tbody tr:nth-child(even) { background: var(--zebra); }
figure { margin: 1.2rem 0 1.8rem; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 0.9rem; margin-top: .3rem; }
footer { color: var(--muted); font-size: 0.85rem; margin-top: 3rem;
         border-top: 1px solid var(--line); padding-top: 1rem; }
@media (max-width: 900px) { .page { grid-template-columns: 1fr; }
  nav.toc { position: static; border-right: 0; max-height: none; } }
@media print { nav.toc { display: none; } .page { display: block; } }
"""


def _data_uri(path: Path) -> str:
    mime = _MIME.get(path.suffix.lower())
    if mime is None:
        raise ValueError(
            f"report: figure {path.name!r} has an unsupported type {path.suffix!r}; expected "
            f"one of {sorted(_MIME)}"
        )
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def _png_text(data: bytes) -> dict[str, str]:
    """The ``tEXt`` entries of a PNG file (empty for anything else)."""
    out: dict[str, str] = {}
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return out
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        if kind == b"tEXt" and b"\0" in chunk:
            key, value = chunk.split(b"\0", 1)
            out[key.decode("latin-1")] = value.decode("latin-1")
        elif kind in (b"IDAT", b"IEND"):
            break
        pos += 12 + length
    return out


def _figure_html(path: Path, alt: str, caption: str) -> str:
    """A ``<figure>`` with the image embedded; a PNG written by
    :func:`raterstats.plots.save_figure` also states its smallest text size and resolution
    (``data-min-font-pt``, ``data-dpi``), from which a browser check computes the size at
    which the text is shown."""
    from raterstats.plots import PNG_KEYS

    meta = _png_text(path.read_bytes()) if path.suffix.lower() == ".png" else {}
    data = "".join(
        f' data-{attr.replace("_", "-")}="{html.escape(meta[key], quote=True)}"'
        for attr, key in PNG_KEYS.items()
        if key in meta
    )
    return (
        f'<figure><img src="{_data_uri(path)}" alt="{html.escape(alt, quote=True)}"{data}>'
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
    )


def _files_section(text: str, folder: Path, *, skip: set[str]) -> tuple[str, list[Path]]:
    """``text`` whose "Files" section (added at the end when there is none) lists every
    figure, table and data file of ``folder`` (:data:`_LINKED_SUFFIXES`), and the files it
    links that way. A file the section names in backticks is linked where it stands; one it
    does not name is added as a linked bullet; a name of a file that is not in the folder
    is marked so, and not linked."""
    present = sorted(
        p
        for p in folder.iterdir()
        if p.is_file()
        and p.suffix.lower() in _LINKED_SUFFIXES
        and p.name not in skip
        and not p.name.startswith(".")
    )
    m = _FILES_HEADING.search(text)
    if m is None:
        if not present:
            return text, []
        text = text.rstrip("\n") + "\n\n## Files\n\n"
        m = _FILES_HEADING.search(text)
        assert m is not None
    nxt = re.search(r"^#{1,2} ", text[m.end() :], flags=re.MULTILINE)
    end = m.end() + nxt.start() if nxt else len(text)
    section = text[m.end() : end]
    named = {n.group("name") for n in _CODE_FILE.finditer(section)}

    def mark_missing(n: re.Match[str]) -> str:
        if (folder / n.group("name")).is_file() or n.group("name") in skip:
            return n.group(0)
        return n.group(0) + " (not in this folder)"

    section = _CODE_FILE.sub(mark_missing, section)
    added = [p for p in present if p.name not in named]
    bullets = []
    for p in added:
        label = f"`{p.name}`" if _CODE_FILE.fullmatch(f"`{p.name}`") else escape_markdown(p.name)
        bullets.append(f"- [{label}]({urllib.parse.quote(p.name)})")
    if bullets:
        sep = "\n" if section.strip() else "\n\n"
        section = section.rstrip("\n") + sep + "\n".join(bullets) + "\n\n"
    return text[: m.end()] + section + text[end:], added


def _markdown_text(text: str) -> str:
    """Markdown inline text as plain text: backslash escapes and character references
    resolved (for an image's alt text, which goes into HTML attributes)."""
    return html.unescape(re.sub(r"\\([\\`*_{}\[\]()#+\-.!|>])", r"\1", text))


#: URL schemes a link or image of the report may have (no scheme: a relative link)
_SAFE_SCHEMES = {"http", "https", "mailto"}


def _safe_url(url: str, *, image: bool) -> bool:
    """Whether ``url`` is a relative, in-page, http(s) or mailto target (or, for an image,
    a ``data:image/`` URI), the way a browser reads it (control characters and spaces
    dropped, case ignored)."""
    flat = re.sub(r"[\x00-\x20\x7f]", "", html.unescape(url)).lower()
    m = re.match(r"([a-z][a-z0-9+.\-]*):", flat)
    if m is None:
        return True
    return m.group(1) in _SAFE_SCHEMES or (image and flat.startswith("data:image/"))


def _markdown_converter() -> Any:
    """Python-Markdown with tables, a table of contents, fenced code and sane lists, and
    nothing of the text passed as markup: raw HTML (blocks and inline) is off, so ``<`` in
    the text is shown as ``<``, and links or images to other URL schemes than
    :data:`_SAFE_SCHEMES` (``javascript:``, ...) lose their target."""
    import markdown
    from markdown.extensions import Extension
    from markdown.treeprocessors import Treeprocessor

    class _SafeLinks(Treeprocessor):
        def run(self, root: Any) -> None:
            for el in root.iter():
                for attr, image in (("href", False), ("src", True)):
                    url = el.get(attr)
                    if url is not None and not _safe_url(url, image=image):
                        del el.attrib[attr]

    class _NoRawHtml(Extension):
        def extendMarkdown(self, md: Any) -> None:
            md.preprocessors.deregister("html_block")
            md.inlinePatterns.deregister("html")
            md.treeprocessors.register(_SafeLinks(md), "raterstats_safe_links", 5)

    return markdown.Markdown(
        extensions=["tables", "toc", "fenced_code", "sane_lists", _NoRawHtml()],
        extension_configs={"toc": {"toc_depth": "2-3", "permalink": False}},
    )


def report(
    folder: str | Path,
    *,
    out: str | Path | None = None,
    title: str | None = None,
    methods: str | None = None,
) -> Path:
    """Write one self-contained HTML file from a results folder with a ``report.md``.

    The Markdown is rendered with its tables; every figure it references (``![...](x.png)``)
    is embedded as a ``data:`` URI, and figures of the folder it does not reference are
    added under "Further figures", so the HTML needs no other file to show every figure.
    File names in backticks that exist in the folder become links, and the CSV tables stay
    beside the HTML (copied there when ``out`` is in another folder). A table of contents
    from the headings and a small stylesheet make it readable on screen and in print.

    Parameters
    ----------
    folder : path
        Results folder holding ``report.md`` (e.g. what ``raterstats demo`` writes).
    out : path, optional
        HTML file to write (default ``folder/report.html``).
    title : str, optional
        Page title (default: the first level-1 heading of ``report.md``).
    methods : str, optional
        A methods paragraph (Markdown, e.g. from :func:`methods_paragraph`) added as a
        "Methods" section before the "Files" section (or at the end).

    Returns
    -------
    pathlib.Path
        The HTML file.

    Raises
    ------
    FileNotFoundError
        When ``report.md`` or a figure it references is missing.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "report.md").write_text("# Study\\n\\n| a | b |\\n|---|---|\\n| 1 | 2 |\\n")
    >>> html = report(d).read_text()
    >>> "<table>" in html and "<title>Study</title>" in html
    True
    """
    src_dir = Path(folder)
    md_path = src_dir / "report.md"
    if not md_path.is_file():
        raise FileNotFoundError(
            f"report: {md_path} does not exist; expected a results folder with a report.md "
            "(run `raterstats demo` or write one)"
        )
    target = Path(out) if out is not None else src_dir / "report.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    text = md_path.read_text(encoding="utf-8")

    missing: list[str] = []
    used: set[str] = set()
    # figures are HTML that the converter must not see (it passes no raw HTML): each goes
    # in as a placeholder no data can spell (a random token) and is put back afterwards
    token = "rsfig" + secrets.token_hex(8)
    figures: list[str] = []

    def placeholder(figure_html: str) -> str:
        figures.append(figure_html)
        return f"\n\n{token}n{len(figures) - 1}e\n\n"

    def embed(m: re.Match[str]) -> str:
        src = m.group("src")
        if src.startswith("data:"):
            return m.group(0)
        path = src_dir / src
        if not path.is_file():
            missing.append(src)
            return m.group(0)
        used.add(path.resolve().name)
        alt = _markdown_text(m.group("alt"))
        return placeholder(_figure_html(path, alt, alt))

    text = _IMAGE.sub(embed, text)
    if missing:
        raise FileNotFoundError(
            f"report: {len(missing)} figure(s) referenced in {md_path} are not in {src_dir}: "
            + ", ".join(repr(s) for s in missing)
        )
    extra = sorted(p for p in src_dir.iterdir() if p.suffix.lower() in _MIME and p.name not in used)
    extra_md = ""
    if extra:
        extra_md = "\n## Further figures\n\n" + "".join(
            placeholder(_figure_html(p, visible(p.stem), visible(p.name))) for p in extra
        )
    if methods:
        section = f"\n## Methods\n\n{methods.strip()}\n\n"
        m_files = re.search(r"^## Files\s*$", text, flags=re.MULTILINE)
        if m_files:
            text = text[: m_files.start()] + section + extra_md + text[m_files.start() :]
        else:
            text = text + "\n" + section + extra_md
    elif extra_md:
        m_files = re.search(r"^## Files\s*$", text, flags=re.MULTILINE)
        at = m_files.start() if m_files else len(text)
        text = text[:at] + extra_md + "\n" + text[at:]

    linked: list[Path] = []
    text, listed = _files_section(text, src_dir, skip={"report.md", "report.html", target.name})
    linked += listed

    def link(m: re.Match[str]) -> str:
        name = m.group("name")
        path = src_dir / name
        if name == "report.md" or not path.is_file():
            return m.group(0)
        linked.append(path)
        return f"[`{name}`]({name})"

    text = fit_tables(_CODE_FILE.sub(link, text))

    md = _markdown_converter()
    body = md.convert(text)
    for k, figure in enumerate(figures):
        body = body.replace(f"<p>{token}n{k}e</p>", figure).replace(f"{token}n{k}e", figure)
    body = table_html(body)
    toc = getattr(md, "toc", "")
    if title is None:
        # the first level-1 heading as rendered (HTML-escaped text), without its tags
        m_title = re.search(r"<h1[^>]*>(.*?)</h1>", body, re.S)
        title = html.unescape(re.sub(r"<[^>]*>", "", m_title.group(1))) if m_title else None
        title = title or visible(src_dir.name)
    page = (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="raterstats">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        '<div class="page">\n'
        f'<nav class="toc" aria-label="Contents"><h2>Contents</h2>{toc}</nav>\n'
        f"<main>\n{body}\n"
        f"<footer>Written by raterstats from {html.escape(md_path.name)}; the tables are "
        "the CSV files beside this page.</footer>\n</main>\n</div>\n</body>\n</html>\n"
    )
    write_atomic(target, lambda tmp: tmp.write_text(page, encoding="utf-8"))
    if target.parent.resolve() != src_dir.resolve():
        for p in sorted({*linked, *src_dir.glob("*.csv")}):
            shutil.copy2(p, target.parent / p.name)
    return target
