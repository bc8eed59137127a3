"""The ``raterstats`` command line.

Every command that reads ratings takes the same options: the file (or ``data`` in a study
file), ``--column ROLE=COLUMN``, ``--scale SCALE`` or ``--scale DIMENSION=SCALE``,
``--wide``, ``--filter KEY=VALUE`` and ``--collapse``; ``--study study.toml`` sets them once
for a study (options given on the command line win). A study file::

    data = "ratings.csv"            # relative to the study file
    collapse = "likert5_to_3"       # optional
    scale = "likert5"               # one scale for all dimensions, or a table:

    [columns]                       # role = "column in the file"
    item = "answer_id"
    rater = "annotator"

    [filter]                        # keep only these ratings
    rater_kind = "human"

    [agreement]                     # defaults of `raterstats agreement`
    statistics = ["randolph_kappa", "krippendorff_alpha"]
    by = ["dimension", "design"]

    [fit]                           # defaults of `raterstats fit`
    model = "mace"
    draws = 1000

    [rank]                          # also [designs]: defaults of those commands
    score_map = "yes_partially_no"

Examples::

    raterstats demo --out raterstats-report
    raterstats validate ratings.csv --column item=answer_id --column rater=annotator \\
        --scale likert5
    raterstats agreement --study study.toml --json
    raterstats fit --study study.toml --model mace --method em --out fit.nc
    raterstats rank --study study.toml --fit fit.nc --json
    raterstats report raterstats-report --fit MACE=fit.nc
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from raterstats.ingest import RatingsError, read_ratings
from raterstats.scales import IntervalScale, NominalScale, OrdinalScale, Scale
from raterstats.version import __version__

if TYPE_CHECKING:
    import polars as pl
    import xarray as xr

    from raterstats.ratings import Ratings

app = typer.Typer(
    name="raterstats",
    help=(
        "Statistics of human and LLM ratings: agreement, Bayesian annotator models, "
        "system rankings and annotation designs.\n\n"
        "Example: raterstats demo\n\n"
        "Example: raterstats agreement ratings.csv -s likert5 --json"
    ),
    no_args_is_help=True,
    add_completion=False,
)
console = Console(stderr=True, log_path=False)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"raterstats {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool | None,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = None,
) -> None:
    """raterstats command line."""


# ----------------------------------------------------------------------------- helpers


@contextmanager
def _spinner(start: str) -> Iterator[Callable[[str], None]]:
    """A progress line with a spinner and the elapsed time, on stderr."""
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as bar:
        task = bar.add_task(start, total=None)

        def say(msg: str) -> None:
            bar.update(task, description=msg)
            bar.console.log(msg)

        yield say
        bar.update(task, description="done")


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.echo(message, err=True)
    return typer.Exit(code=code)


def _records(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON-safe dicts (NaN and infinities become null)."""
    out = []
    for row in frame.to_dicts():
        out.append(
            {
                k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in row.items()
            }
        )
    return out


def _print_frame(frame: pl.DataFrame, *, as_json: bool, csv: Path | None) -> None:
    from raterstats.formatting import markdown_table

    if csv is not None:
        csv.parent.mkdir(parents=True, exist_ok=True)
        frame.write_csv(csv)
        console.log(f"wrote {csv}")
    if as_json:
        typer.echo(json.dumps(_records(frame), indent=2, default=str))
    else:
        typer.echo(markdown_table(frame))


# ----------------------------------------------------------------------------- demo


@app.command()
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Report folder to write.")] = Path(
        "raterstats-report"
    ),
    ordinal_draws: Annotated[
        int,
        typer.Option(
            "--ordinal-draws",
            help="Draws (and tuning steps) per chain of the ordinal rater model; 0 skips it.",
        ),
    ] = 500,
    categorical_draws: Annotated[
        int,
        typer.Option(
            "--categorical-draws",
            help="Draws (and tuning steps) per chain of the MACE model; 0 skips it.",
        ),
    ] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Random seed of every step.")] = 1,
) -> None:
    """Analyse the built-in clinical-QA study and write a report folder.

    Example: raterstats demo --out raterstats-report
    """
    from raterstats.demo import run_demo

    with _spinner("starting") as progress:
        result = run_demo(
            out,
            progress=progress,
            ordinal_draws=ordinal_draws,
            categorical_draws=categorical_draws,
            random_seed=seed,
        )
    typer.echo(f"Report written to {result.report.resolve()}")
    typer.echo(f"HTML report: {(result.out / 'report.html').resolve()}")
    typer.echo(f"({len(result.files)} files in {result.out.resolve()})")


# ----------------------------------------------------------------------------- data options

_NAMED_SCALES = {
    "likert5": lambda: OrdinalScale.likert(5),
    "likert7": lambda: OrdinalScale.likert(7),
    "likert3": lambda: OrdinalScale([-1, 0, 1], ["disagree", "neutral", "agree"]),
    "binary": lambda: OrdinalScale([0, 1], ["no", "yes"]),
    "yes-partially-no": lambda: NominalScale(["yes", "partially", "no"]),
    "yes-no-refutes": lambda: NominalScale(["yes", "no", "refutes"]),
    "interval": lambda: IntervalScale(),
}


def _parse_scale(text: str) -> Scale:
    if text in _NAMED_SCALES:
        return _NAMED_SCALES[text]()
    kind, _, levels = text.partition(":")
    parts = [p.strip() for p in levels.split(",") if p.strip()]
    if kind in ("ordinal", "nominal") and parts:
        vals: list[str | int | float] = []
        for p in parts:
            try:
                vals.append(int(p))
            except ValueError:
                try:
                    vals.append(float(p))
                except ValueError:
                    vals.append(p)
        return OrdinalScale(vals) if kind == "ordinal" else NominalScale(vals)
    raise typer.BadParameter(
        f"unknown scale {text!r}: use one of {sorted(_NAMED_SCALES)}, "
        "'ordinal:1,2,3' or 'nominal:yes,no'"
    )


def _pairs(specs: list[str] | None, option: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for spec in specs or []:
        key, sep, value = spec.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"{option} takes KEY=VALUE, got {spec!r}")
        out[key.strip()] = value.strip()
    return out


def _value(text: str) -> Any:
    """A command-line value: JSON when it parses (numbers, true/false, lists), else text."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


@dataclass
class Study:
    """The settings of a study, from a TOML study file and the command line."""

    data: Path | None = None
    columns: dict[str, str] = field(default_factory=dict)
    scale: str | dict[str, str] | None = None
    wide: bool = False
    filter: dict[str, Any] = field(default_factory=dict)
    collapse: str | None = None
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> Study:
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise _fail(f"study file {path} does not exist", 2) from None
        except tomllib.TOMLDecodeError as err:
            raise _fail(f"study file {path}: not valid TOML ({err})", 2) from None
        known = {"data", "columns", "scale", "format", "filter", "collapse"}
        sections = {"agreement", "fit", "rank", "designs"}
        unknown = sorted(set(raw) - known - sections)
        if unknown:
            raise _fail(
                f"study file {path}: unknown keys {unknown}; expected {sorted(known | sections)}",
                2,
            )
        data = raw.get("data")
        scale = raw.get("scale")
        if scale is not None and not isinstance(scale, str | dict):
            raise _fail(f"study file {path}: 'scale' must be a string or a table", 2)
        return cls(
            data=(path.parent / data) if data else None,
            columns={str(k): str(v) for k, v in raw.get("columns", {}).items()},
            scale=scale,
            wide=raw.get("format", "long") == "wide",
            filter=dict(raw.get("filter", {})),
            collapse=raw.get("collapse"),
            sections={k: dict(raw.get(k, {})) for k in sections},
        )

    def option(self, section: str, key: str, given: Any, default: Any) -> Any:
        """The command-line value when given, else the study file's, else the default."""
        if given is not None:
            return given
        return self.sections.get(section, {}).get(key, default)


StudyOpt = Annotated[
    Path | None,
    typer.Option(
        "--study",
        "-S",
        help="TOML study file with data, \\[columns], scale, \\[filter], collapse and "
        "per-command defaults (\\[agreement], \\[fit], \\[rank], \\[designs]).",
    ),
]
SourceArg = Annotated[
    Path | None,
    typer.Argument(
        help="CSV, TSV, Parquet, JSONL or JSON file (default: `data` of the study file)."
    ),
]
ColumnOpt = Annotated[
    list[str] | None,
    typer.Option("--column", "-c", help="Column role mapping ROLE=COLUMN (repeatable)."),
]
ScaleOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--scale",
        "-s",
        help="Scale for all dimensions (likert5, likert7, binary, yes-partially-no, "
        "ordinal:1,2,3, nominal:a,b, interval) or per dimension DIMENSION=SCALE (repeatable).",
    ),
]
WideOpt = Annotated[
    bool | None, typer.Option("--wide/--long", help="Items x raters (wide) or long format.")
]
FilterOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--filter",
        "-f",
        help="Keep ratings with KEY=VALUE (dimension, design, rater_kind, system, ...; "
        "repeatable; VALUE may be a,b for several).",
    ),
]
CollapseOpt = Annotated[
    str | None, typer.Option("--collapse", help="Collapse the scale, e.g. likert5_to_3.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
CsvOpt = Annotated[Path | None, typer.Option("--csv", help="Also write the table as CSV here.")]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="Random seed (default 1).")]


def _study(
    study: Path | None,
    source: Path | None,
    column: list[str] | None,
    scale: list[str] | None,
    wide: bool | None,
    filters: list[str] | None,
    collapse: str | None,
) -> Study:
    s = Study.read(study) if study is not None else Study()
    if source is not None:
        s.data = source
    s.columns.update(_pairs(column, "--column"))
    scales_cli: dict[str, str] = {}
    for spec in scale or []:
        dim, sep, sc = spec.partition("=")
        if sep:
            scales_cli[dim.strip()] = sc.strip()
        else:
            s.scale = spec.strip()
    if scales_cli:
        base = s.scale if isinstance(s.scale, dict) else {}
        s.scale = {**base, **scales_cli}
    if wide is not None:
        s.wide = wide
    for key, value in _pairs(filters, "--filter").items():
        parts = [_value(v) for v in value.split(",")]
        s.filter[key] = parts if len(parts) > 1 else parts[0]
    if collapse is not None:
        s.collapse = collapse
    return s


def _load(s: Study) -> Ratings:
    """Read the study's ratings; exit 1 with the list of problems on bad data."""
    from raterstats.scales import COLLAPSES

    if s.data is None:
        raise _fail("no ratings file: give one as the argument or as `data` in --study", 2)
    scales: Scale | dict[str, Scale] | None
    if isinstance(s.scale, dict):
        scales = {str(k): _parse_scale(str(v)) for k, v in s.scale.items()}
    elif isinstance(s.scale, str):
        scales = _parse_scale(s.scale)
    else:
        scales = None
    try:
        ratings = read_ratings(
            s.data,
            columns=s.columns or None,
            scale=scales,
            format="wide" if s.wide else "long",
        )
    except RatingsError as err:
        raise _fail(str(err)) from None
    if s.filter:
        try:
            ratings = ratings.filter(**s.filter)
        except (KeyError, ValueError, TypeError) as err:
            raise _fail(f"--filter {s.filter}: {err}", 2) from None
        if ratings.n_ratings == 0:
            raise _fail(f"no ratings left after --filter {s.filter}")
    if s.collapse:
        if s.collapse not in COLLAPSES:
            raise _fail(f"unknown collapse {s.collapse!r}; known: {sorted(COLLAPSES)}", 2)
        try:
            ratings = ratings.collapse(s.collapse)
        except (ValueError, KeyError) as err:
            raise _fail(f"--collapse {s.collapse}: {err}") from None
    return ratings


# ----------------------------------------------------------------------------- validate


@app.command()
def validate(
    source: SourceArg = None,
    column: ColumnOpt = None,
    scale: ScaleOpt = None,
    wide: WideOpt = None,
    filters: FilterOpt = None,
    collapse: CollapseOpt = None,
    study: StudyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Read and validate a ratings file; print its summary, or every problem found.

    Exits with status 1 when the file has problems, listing each problem
    with its row, column, value and what was expected.

    Example: raterstats validate ratings.csv -c item=answer_id -c rater=annotator -s likert5
    """
    ratings = _load(_study(study, source, column, scale, wide, filters, collapse))
    summary = ratings.summary()
    if as_json:
        typer.echo(json.dumps(summary.to_dict(), indent=2, default=str))
    else:
        typer.echo(summary.to_markdown())


# ----------------------------------------------------------------------------- agreement


@app.command()
def agreement(
    source: SourceArg = None,
    column: ColumnOpt = None,
    scale: ScaleOpt = None,
    wide: WideOpt = None,
    filters: FilterOpt = None,
    collapse: CollapseOpt = None,
    study: StudyOpt = None,
    statistic: Annotated[
        list[str] | None,
        typer.Option(
            "--statistic",
            "-m",
            help="Statistic (repeatable): percent_agreement, fleiss_kappa, randolph_kappa, "
            "gwet_ac1, krippendorff_alpha, cohen_kappa, icc, ... (default: five common ones).",
        ),
    ] = None,
    by: Annotated[
        list[str] | None,
        typer.Option("--by", help="Split into cells by these columns (default dimension, design)."),
    ] = None,
    n_boot: Annotated[
        int | None, typer.Option("--n-boot", help="Bootstrap replicates (0: no intervals).")
    ] = None,
    ci: Annotated[float | None, typer.Option("--ci", help="Interval coverage (0.95).")] = None,
    seed: SeedOpt = None,
    as_json: JsonOpt = False,
    csv: CsvOpt = None,
) -> None:
    """Classical agreement per dimension x design with item-bootstrap intervals.

    Prints a Markdown table, or JSON records with --json (statistic, cell,
    estimate, ci_low, ci_high, counts); --csv also writes the table.

    Example: raterstats agreement ratings.csv -s likert5 -m randolph_kappa --json
    """
    from raterstats.agreement import AGREEMENT_STATISTICS, AgreementInputError, agreement_table
    from raterstats.agreement import agreement as compute
    from raterstats.agreement.table import DEFAULT_STATISTICS

    s = _study(study, source, column, scale, wide, filters, collapse)
    stats = list(statistic or s.option("agreement", "statistics", None, DEFAULT_STATISTICS))
    unknown = [x for x in stats if x not in AGREEMENT_STATISTICS]
    if unknown:
        raise _fail(f"unknown statistic(s) {unknown}; known: {list(AGREEMENT_STATISTICS)}", 2)
    ratings = _load(s)
    cells = list(by or s.option("agreement", "by", None, ("dimension", "design")))
    replicates = int(s.option("agreement", "n_boot", n_boot, 1000))
    with _spinner(f"agreement: {len(stats)} statistics, {replicates} bootstrap replicates"):
        try:
            ds = compute(
                ratings,
                stats,
                by=cells,
                n_boot=replicates,
                ci_prob=float(s.option("agreement", "ci", ci, 0.95)),
                random_seed=int(s.option("agreement", "seed", seed, 1)),
            )
        except (AgreementInputError, ValueError, KeyError) as err:
            raise _fail(f"agreement: {err}") from None
    _print_frame(agreement_table(ds), as_json=as_json, csv=csv)


# ----------------------------------------------------------------------------- fit

@app.command()
def fit(
    source: SourceArg = None,
    column: ColumnOpt = None,
    scale: ScaleOpt = None,
    wide: WideOpt = None,
    filters: FilterOpt = None,
    collapse: CollapseOpt = None,
    study: StudyOpt = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="mace, dawid-skene, ordinal or length-effect (default mace)."),
    ] = None,
    method: Annotated[
        str | None, typer.Option("--method", help="nuts (default), em, map or advi.")
    ] = None,
    sampler: Annotated[
        str | None, typer.Option("--sampler", help="NUTS sampler: nutpie (default), pymc, numpyro.")
    ] = None,
    draws: Annotated[int | None, typer.Option("--draws", help="Draws per chain (1000).")] = None,
    tune: Annotated[
        int | None, typer.Option("--tune", help="Tuning steps per chain (default: draws).")
    ] = None,
    chains: Annotated[int | None, typer.Option("--chains", help="Chains (4).")] = None,
    seed: SeedOpt = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-O", help="Model option KEY=VALUE, e.g. hierarchical=false."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="netCDF file to write (fit.nc).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Fit a rater model and write the posterior (ArviZ DataTree) as netCDF.

    The file reloads with xarray.open_datatree and is analysed like a fresh fit;
    its attrs hold the model, priors, sampler settings, seed and data fingerprint.

    Example: raterstats fit ratings.csv -s yes-partially-no --model mace --method em --out fit.nc
    """
    from raterstats.models import ModelInputError, model_class

    s = _study(study, source, column, scale, wide, filters, collapse)
    name = str(s.option("fit", "model", model, "mace"))
    try:
        cls = model_class(name)
    except ValueError as err:
        raise _fail(str(err), 2) from None
    options = dict(s.sections.get("fit", {}).get("options", {}))
    options.update({k: _value(v) for k, v in _pairs(option, "--option").items()})
    try:
        spec = cls(**options)
    except (TypeError, ValueError) as err:
        raise _fail(f"model {name}: {err}", 2) from None
    ratings = _load(s)
    n_draws = int(s.option("fit", "draws", draws, 1000))
    settings = {
        "method": str(s.option("fit", "method", method, "nuts")),
        "sampler": str(s.option("fit", "sampler", sampler, "nutpie")),
        "draws": n_draws,
        "tune": int(s.option("fit", "tune", tune, n_draws)),
        "chains": int(s.option("fit", "chains", chains, 4)),
        "random_seed": int(s.option("fit", "seed", seed, 1)),
    }
    target = Path(s.option("fit", "out", out, "fit.nc"))
    with _spinner(f"fitting {spec!r} ({settings['method']})") as say:
        try:
            dt = spec.fit(ratings, progress=False, **settings)
        except ModelInputError as err:
            problems = "\n  - ".join(err.problems)
            raise _fail(f"{name} cannot fit these ratings:\n  - {problems}") from None
        except (ValueError, NotImplementedError) as err:
            raise _fail(f"fit: {err}", 2) from None
        say(f"writing {target}")
        target.parent.mkdir(parents=True, exist_ok=True)
        dt.to_netcdf(target)
    info = {"file": str(target), **{k: dt.attrs[k] for k in dt.attrs}}
    if "diverging" in dt["sample_stats"].data_vars:
        info["divergences"] = int(dt["sample_stats"]["diverging"].sum())
    if as_json:
        typer.echo(json.dumps(info, indent=2, default=str))
    else:
        typer.echo(
            f"{info['model']} fitted by {info['method']} in {float(info['fit_seconds']):.1f} s; "
            f"written to {target}"
        )


def _open_fit(path: Path) -> xr.DataTree:
    import xarray as xr

    if not path.is_file():
        raise _fail(f"fit file {path} does not exist (write one with `raterstats fit`)", 2)
    try:
        return xr.open_datatree(path)
    except (OSError, ValueError) as err:
        raise _fail(f"cannot read {path} as a netCDF DataTree: {err}", 2) from None


# ----------------------------------------------------------------------------- rank


@app.command()
def rank(
    source: SourceArg = None,
    column: ColumnOpt = None,
    scale: ScaleOpt = None,
    wide: WideOpt = None,
    filters: FilterOpt = None,
    collapse: CollapseOpt = None,
    study: StudyOpt = None,
    fit_file: Annotated[
        Path | None,
        typer.Option(
            "--fit",
            help="A fit written by `raterstats fit` (ordinal: ranks on its own; MACE / "
            "Dawid-Skene: also needs the ratings).",
        ),
    ] = None,
    method: Annotated[
        str | None,
        typer.Option(
            "--method",
            help="Without --fit: mean (default), majority, pyramid, mace or dawid_skene.",
        ),
    ] = None,
    score: Annotated[
        str | None,
        typer.Option("--score", help="Ordinal fit: fair_average (default) or latent."),
    ] = None,
    score_map: Annotated[
        str | None,
        typer.Option("--score-map", help="Scores of categorical labels, e.g. yes_partially_no."),
    ] = None,
    n_boot: Annotated[
        int | None, typer.Option("--n-boot", help="Case-bootstrap replicates (1000).")
    ] = None,
    ci: Annotated[float | None, typer.Option("--ci", help="Interval probability (0.9).")] = None,
    seed: SeedOpt = None,
    as_json: JsonOpt = False,
    csv: CsvOpt = None,
) -> None:
    """Rank the systems with uncertainty: score interval, expected rank, P(best).

    From raw ratings (mean, majority or Pyramid score with a case bootstrap)
    or from a fit (--fit fit.nc).

    Example: raterstats rank ratings.csv --method pyramid --score-map yes_partially_no
    """
    from raterstats.ranking import rank_systems, rank_table

    s = _study(study, source, column, scale, wide, filters, collapse)
    kwargs: dict[str, Any] = {
        "ci_prob": float(s.option("rank", "ci", ci, 0.9)),
        "n_boot": int(s.option("rank", "n_boot", n_boot, 1000)),
        "random_seed": int(s.option("rank", "seed", seed, 1)),
    }
    sm = s.option("rank", "score_map", score_map, None)
    if sm is not None:
        kwargs["score_map"] = sm
    fit_path = fit_file or s.sections.get("rank", {}).get("fit")
    src: Any
    if fit_path is not None:
        dt = _open_fit(Path(fit_path))
        src = dt
        kwargs["score"] = str(s.option("rank", "score", score, "fair_average"))
        if dt.attrs.get("model") in ("mace", "dawid_skene"):
            kwargs["ratings"] = _load(s)
    else:
        src = _load(s)
        kwargs["method"] = str(s.option("rank", "method", method, "mean"))
    with _spinner("ranking the systems"):
        try:
            ds = rank_systems(src, **kwargs)
        except (ValueError, KeyError, TypeError) as err:
            raise _fail(f"rank: {err}") from None
    _print_frame(rank_table(ds), as_json=as_json, csv=csv)


# ----------------------------------------------------------------------------- designs


def _level_map(text: str | Mapping[str, Any] | None) -> dict[int, float] | None:
    """``1=-1,2=-1,3=0,4=1,5=1`` (or a TOML table) -> {1: -1.0, ...}."""
    if text is None:
        return None
    items = (
        text.items()
        if isinstance(text, Mapping)
        else _pairs(text.split(","), "--level-map").items()
    )
    try:
        return {int(k): float(v) for k, v in items}
    except ValueError:
        raise _fail(
            f"--level-map takes LEVEL=VALUE pairs of numbers, e.g. 1=-1,2=-1,3=0,4=1,5=1; "
            f"got {text!r}",
            2,
        ) from None


@app.command()
def designs(
    fit_file: Annotated[
        Path | None,
        typer.Option("--fit", help="A fit of the ordinal model (raterstats fit --model ordinal)."),
    ] = None,
    study: StudyOpt = None,
    n_replicates: Annotated[
        int | None,
        typer.Option(
            "--n-replicates",
            help="Posterior predictive replicates for kappa / alpha per design (100; 0 skips).",
        ),
    ] = None,
    level_map: Annotated[
        str | None,
        typer.Option(
            "--level-map",
            help="Map rating levels before agreement, e.g. 1=-1,2=-1,3=0,4=1,5=1 (3-point).",
        ),
    ] = None,
    ci: Annotated[float | None, typer.Option("--ci", help="Interval probability (0.9).")] = None,
    seed: SeedOpt = None,
    as_json: JsonOpt = False,
    csv: CsvOpt = None,
) -> None:
    """Compare annotation designs: reliability per dimension x design from an ordinal fit.

    With posterior predictive Randolph's kappa and Krippendorff's alpha per design.

    Example: raterstats designs --fit ordinal.nc --level-map 1=-1,2=-1,3=0,4=1,5=1 --json
    """
    from raterstats.design import compare_designs, design_table

    s = Study.read(study) if study is not None else Study()
    path = fit_file or s.sections.get("designs", {}).get("fit")
    if path is None:
        raise _fail("designs needs --fit FIT.nc (an OrdinalRaters fit)", 2)
    dt = _open_fit(Path(path))
    with _spinner("comparing designs"):
        try:
            ds = compare_designs(
                dt,
                n_replicates=int(s.option("designs", "n_replicates", n_replicates, 100)),
                level_map=_level_map(s.option("designs", "level_map", level_map, None)),
                ci_prob=float(s.option("designs", "ci", ci, 0.9)),
                random_seed=int(s.option("designs", "seed", seed, 1)),
            )
        except (ValueError, KeyError) as err:
            raise _fail(f"designs: {err}") from None
    _print_frame(design_table(ds), as_json=as_json, csv=csv)


# ----------------------------------------------------------------------------- report


@app.command()
def report(
    folder: Annotated[
        Path, typer.Argument(help="Results folder with a report.md (e.g. from `demo`).")
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="HTML file to write (default FOLDER/report.html)."),
    ] = None,
    fit_files: Annotated[
        list[str] | None,
        typer.Option(
            "--fit",
            help="LABEL=FIT.nc (repeatable): fits whose models, priors, sampler settings, "
            "versions and seeds the Methods section states.",
        ),
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="Page title.")] = None,
) -> None:
    """Write one self-contained HTML report of a results folder.

    Figures embedded, tables rendered, a table of contents; the CSV tables stay beside it.

    Example: raterstats report raterstats-report --fit MACE=fit.nc
    """
    from raterstats.report import methods_paragraph
    from raterstats.report import report as write_report

    methods = None
    if fit_files:
        fits = {k: _open_fit(Path(v)) for k, v in _pairs(fit_files, "--fit").items()}
        try:
            methods = methods_paragraph(fits)
        except (ValueError, TypeError) as err:
            raise _fail(f"report: {err}", 2) from None
    try:
        path = write_report(folder, out=out, title=title, methods=methods)
    except (FileNotFoundError, ValueError) as err:
        raise _fail(str(err)) from None
    typer.echo(f"Report written to {path.resolve()}")


def main() -> None:
    """Entry point of the ``raterstats`` console script."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
