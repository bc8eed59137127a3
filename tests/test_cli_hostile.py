"""The command line under hostile input (issue 18, items 6 and 7, bad usage, filters).

issue 18, item 6: every key and type of the TOML study file is checked against one schema
(:data:`raterstats.cli.studyfile.STUDY_FILE`); issue 18, item 7: output files are checked
before the work and written all at once, so that Ctrl-C leaves the previous file intact;
bad usage exits 2 and bad data 1, never with a traceback; ``--filter`` selects ids as text
before validation.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from raterstats.cli import app
from raterstats.cli.studyfile import (
    FILTERABLE,
    STUDY_FILE,
    TOP,
    StudyFileError,
    check_study,
    schema_markdown,
)
from raterstats.files import TEMP_MARK, OutputPathError, check_output, write_atomic
from raterstats.ingest import RatingsError, read_ratings

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()


def run(*args: str) -> tuple[int, str]:
    """Exit code and output (stdout and stderr, box borders and line breaks removed)."""
    res = runner.invoke(app, [str(a) for a in args], terminal_width=200)
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    text = " ".join(res.output.replace("│", " ").split())
    return res.exit_code, text


def no_temp_left(folder: Path) -> bool:
    return not [p for p in folder.iterdir() if TEMP_MARK in p.name]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """A ratings file whose correctness ratings are valid and whose safety ratings are not,
    raters named by numbers; a valid yes/no file; a study file; a folder."""
    rows = ["item,rater,rating,dimension"]
    for item in ("a", "b", "c"):
        for rater in ("1", "2", "10"):
            rows.append(f"{item},{rater},{(len(item) + len(rater)) % 5 + 1},correctness")
            rows.append(f"{item},{rater},{'9' if rater == '2' else 'x'},safety")
    likert = tmp_path / "likert.csv"
    likert.write_text("\n".join(rows) + "\n")
    yes_no = tmp_path / "yes_no.csv"
    yes_no.write_text(
        "item,rater,rating\n"
        + "".join(
            f"i{i},r{r},{'yes' if (i + r) % 3 else 'no'}\n" for i in range(6) for r in range(3)
        )
    )
    study = tmp_path / "study.toml"
    study.write_text(f'data = "{yes_no.name}"\nscale = "ordinal:no,yes"\n')
    folder = tmp_path / "a_folder"
    folder.mkdir()
    return {"likert": likert, "yes_no": yes_no, "study": study, "folder": folder}


def study_file(tmp_path: Path, text: str, name: str = "study.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


# ----------------------------------------------------------------------------- item 6: study


def test_typos_inside_a_section_are_errors_with_a_did_you_mean(tmp_path, files):
    """issue 18, item 6: `[fit] modle = ...` and `drawz = 5` were ignored; now both are
    listed at once, with the file, the table and the closest key."""
    study = study_file(
        tmp_path,
        f"""
        data = "{files["yes_no"].name}"
        [fit]
        modle = "dawid-skene"
        drawz = 5
        """,
    )
    code, out = run("fit", "-S", study, "--method", "em", "--out", tmp_path / "f.nc")
    assert code == 2
    assert f"study file {study} has 2 problems" in out
    assert "[fit] modle: unknown key; did you mean 'model'?" in out
    assert "[fit] drawz: unknown key; did you mean 'draws'?" in out
    assert not (tmp_path / "f.nc").exists()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('columns = "x"', 'columns = "x": expected a table of strings'),
        ("data = 42", "data = 42: expected a path (relative to the study file)"),
        ('[fit]\ndraws = "many"', '[fit] draws = "many": expected an integer'),
        ("[fit]\ndraws = 0", "[fit] draws = 0: expected an integer >= 1"),
        ("[fit]\nchains = 2.5", "[fit] chains = 2.5: expected an integer"),
        (
            '[agreement]\nstatistics = "fleiss_kappa"',
            '[agreement] statistics = "fleiss_kappa": expected a list of strings',
        ),
        (
            '[agreement]\nstatistics = ["fleiss_kapa"]',
            "unknown statistic 'fleiss_kapa'; did you mean 'fleiss_kappa'?",
        ),
        (
            'format = "Wide"',
            "format = \"Wide\": 'Wide' is not one of long, wide (case matters); "
            "did you mean 'wide'?",
        ),
        ('scale = "ordinal:1,1,2"', "levels are not distinct"),
        ("[scale]\nsafety = 3", "the scale of 'safety' must be a string, got 3"),
        ("[columns]\nitme = 'a'", "'itme' is not a column role; did you mean 'item'?"),
        ("[filter]\nraterr = 'x'", "cannot filter on 'raterr'; did you mean 'rater'?"),
        ("[filter]\nrepeat = 'maybe'", "repeat takes true or false"),
        ('[fit]\nmodel = "nosuchmodel"', "unknown model 'nosuchmodel'"),
        ('[fit]\nsampler = "NutPie"', "did you mean 'nutpie'?"),
        ("[rank]\nci = 1.5", "an interval probability is between 0 and 1"),
        ('[rank]\nscore_map = "yes-partially-no"', "did you mean 'yes_partially_no'?"),
        ('[designs]\nlevel_map = "a=b"', "--level-map takes LEVEL=VALUE pairs"),
        ('duplicates = "First"', "did you mean 'first'?"),
        ("fit = 3", "fit = 3: expected a table"),
        ("[colums]\nitem = 'a'", "colums: unknown table or key; did you mean 'columns'?"),
    ],
)
def test_wrong_types_and_values_name_file_key_value_and_expectation(
    tmp_path, files, text, expected
):
    """issue 18, item 6: wrong types ended in tracebacks (or, for a string of statistics,
    in one statistic per character); every one is now an error naming the file, the
    table, the key, the value and what was expected, exit 2."""
    data = "" if text.startswith("data") else f'data = "{files["yes_no"].name}"\n'
    study = study_file(tmp_path, f"{data}{text}\n", "s.toml")
    code, out = run("validate", "-S", study)
    assert code == 2, out
    assert f"study file {study} has 1 problem: - {study}: " in out
    assert expected in out
    assert "Traceback" not in out


def test_every_problem_of_a_study_file_is_listed_at_once():
    """issue 18, item 6: one run lists them all."""
    problems = check_study(
        {
            "data": 1,
            "format": "Wide",
            "columns": {"itme": "a"},
            "fit": {"drawz": 5, "tune": "x", "options": {}},
            "rank": {"n_boot": -1},
            "colour": "red",
        }
    )
    assert len(problems) == 7
    joined = "\n".join(problems)
    for key in ("data = 1", "format", "[columns]", "[fit] drawz", "[fit] tune", "[rank] n_boot"):
        assert key in joined
    assert "colour: unknown table or key" in joined


def _toml_values():
    scalars = st.one_of(
        st.text(max_size=8),
        st.integers(-3, 3),
        st.floats(allow_nan=False, allow_infinity=False, width=32),
        st.booleans(),
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=3)
        ),
        max_leaves=6,
    )


_KEYS = [(section, name) for section, keys in STUDY_FILE.items() for name in keys]


@settings(max_examples=80, deadline=None)
@given(where=st.sampled_from(_KEYS), value=_toml_values())
def test_any_value_of_any_key_is_checked_without_an_exception(where, value):
    """issue 18, item 6 (property): whatever TOML value a key gets, checking never raises;
    a value of the wrong type gives exactly one problem naming the key and the type."""
    section, name = where
    key = STUDY_FILE[section][name]
    raw = {name: value} if section == TOP else {section: {name: value}}
    problems = check_study(raw)
    label = name if section == TOP else f"[{section}] {name}"
    if not key.kind.test(value):
        assert len(problems) == 1
        assert problems[0].startswith(f"{label} = ")
        assert problems[0].endswith(f"expected {key.kind.name}")
    for p in problems:
        assert p.startswith(label) or p.startswith(f"[{name}]")


@settings(max_examples=60, deadline=None)
@given(
    section=st.sampled_from(list(STUDY_FILE)),
    name=st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12),
)
def test_any_unknown_key_is_named(section, name):
    """issue 18, item 6 (property): a key the schema does not know is always reported."""
    if name in STUDY_FILE[section]:
        return
    raw = {name: 1} if section == TOP else {section: {name: 1}}
    (problem,) = check_study(raw)
    label = name if section == TOP else f"[{section}] {name}"
    assert problem.startswith(f"{label}: unknown")


def test_the_schema_covers_every_key_the_commands_read():
    """issue 18, item 6: the commands read the study file only through Study.option, and
    every (table, key) they read is declared in STUDY_FILE and vice versa."""
    from raterstats.cli import analyze_command, commands, labels_command, study

    read: set[tuple[str, str]] = set()
    for module in (commands, labels_command, study, analyze_command):
        tree = ast.parse(inspect.getsource(module))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "option"
                and len(node.args) >= 2
                and all(isinstance(a, ast.Constant) for a in node.args[:2])
            ):
                read.add((node.args[0].value, node.args[1].value))
    # model_spec(s, "<table>", ...) reads MODEL_SPEC_KEYS from the table it is given
    # (with the functions it delegates to: the fit settings, and --model auto's checks)
    spec_reads = {
        node.args[1].value
        for function in (
            labels_command.model_spec,
            labels_command.settings_from_study,
            labels_command.auto_spec,
        )
        for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(function))))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "option"
        and isinstance(node.args[1], ast.Constant)
    }
    assert spec_reads == set(labels_command.MODEL_SPEC_KEYS)
    for module in (commands, labels_command):
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "model_spec"
                and isinstance(node.args[1], ast.Constant)
            ):
                read |= {(node.args[1].value, k) for k in labels_command.MODEL_SPEC_KEYS}
    assert ".sections.get(" not in inspect.getsource(commands)
    declared = {(s, k) for s, keys in STUDY_FILE.items() if s != TOP for k in keys}
    assert read == declared
    from raterstats.cli.study import Study

    with pytest.raises(KeyError, match="not a key of the study file schema"):
        Study().option("fit", "drawz", None, 1)


def _toml_blocks(text: str) -> list[str]:
    return re.findall(r"```toml\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize(
    "doc", ["README.md", "docs/cli.md", "docs/data-format.md", "docs/your-study.md"]
)
def test_every_study_file_in_the_docs_is_valid(doc):
    """issue 18, item 6: the documented study files follow the schema."""
    blocks = _toml_blocks((REPO / doc).read_text())
    assert blocks, doc
    for block in blocks:
        assert check_study(tomllib.loads(block)) == [], block


def test_the_docs_list_every_key_of_the_schema():
    """issue 18, item 6: docs/cli.md holds the schema's table, as generated."""
    text = (REPO / "docs/cli.md").read_text()
    assert schema_markdown() in text
    from raterstats import cli

    example = (cli.__doc__ or "").split("A study file::")[1].split("Examples::")[0]
    assert check_study(tomllib.loads(textwrap.dedent(example))) == []


def test_study_file_paths_are_relative_to_it(tmp_path, files):
    """issue 18, item 6: `[fit] out` (like `data`) is relative to the study file."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "r.csv").write_text(files["yes_no"].read_text())
    study = study_file(sub, '[fit]\nout = "fit.nc"\nmethod = "em"\n')
    study.write_text('data = "r.csv"\nscale = "ordinal:no,yes"\n' + study.read_text())
    code, out = run("fit", "-S", study)
    assert code == 0, out
    assert (sub / "fit.nc").is_file()


def test_a_study_file_that_is_a_folder_or_missing_or_not_utf8(tmp_path, files):
    """issue 18, item 6: unreadable study files exit 2 with the reason."""
    assert run("validate", "-S", files["folder"])[0] == 2
    code, out = run("validate", "-S", tmp_path / "nope.toml")
    assert code == 2 and "does not exist" in out
    bad = tmp_path / "latin1.toml"
    bad.write_bytes('data = "caf\xe9.csv"\n'.encode("latin-1"))
    code, out = run("validate", "-S", bad)
    assert code == 2 and "not UTF-8" in out


# ----------------------------------------------------------------------------- item 7: outputs


def test_write_atomic_keeps_the_previous_file_when_interrupted(tmp_path):
    """issue 18, item 7: a writer interrupted half-way leaves the old file and no temp."""
    target = tmp_path / "fit.nc"
    target.write_bytes(b"previous fit")

    def interrupted(tmp: Path) -> None:
        tmp.write_bytes(b"half of a new")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, interrupted)
    assert target.read_bytes() == b"previous fit"
    assert no_temp_left(tmp_path)

    def failing(tmp: Path) -> None:
        tmp.write_bytes(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        write_atomic(target, failing)
    assert target.read_bytes() == b"previous fit" and no_temp_left(tmp_path)
    write_atomic(target, lambda tmp: tmp.write_bytes(b"new fit"))
    assert target.read_bytes() == b"new fit" and no_temp_left(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fit.nc"]


def test_write_atomic_creates_missing_folders_and_keeps_the_suffix(tmp_path):
    """issue 18, item 7: the temporary file has the target's suffix (Matplotlib chooses
    the format by it)."""
    seen: list[Path] = []

    def write(tmp: Path) -> None:
        seen.append(tmp)
        tmp.write_text("x")

    out = write_atomic(tmp_path / "a" / "b" / "fig.png", write)
    assert out.read_text() == "x"
    assert seen[0].suffix == ".png" and seen[0].parent == out.parent


def test_check_output(tmp_path):
    """issue 18, item 7: what cannot be written is said before the work."""
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    assert check_output(tmp_path / "new" / "out.csv") == tmp_path / "new" / "out.csv"
    assert check_output(tmp_path / "new_folder", folder=True) == tmp_path / "new_folder"
    for bad, folder, message in (
        (tmp_path, False, "is a folder, not a file"),
        (a_file / "out.csv", False, "is a file, not a folder"),
        (a_file, True, "exists and is not a folder"),
        (a_file / "sub", True, "is a file, not a folder"),
        ("", False, "empty path"),
    ):
        with pytest.raises(OutputPathError, match=message):
            check_output(bad, folder=folder)


@pytest.fixture
def no_fit(monkeypatch):
    """Fitting fails the test: output paths must be refused before the fit."""
    from raterstats.models import MACE

    def refuse(*args, **kwargs):
        raise AssertionError("the fit ran before the output path was checked")

    monkeypatch.setattr(MACE, "fit", refuse)


@pytest.mark.parametrize(
    "make_args",
    [
        lambda f, t: ["fit", f["yes_no"], "--out", f["folder"]],
        lambda f, t: ["fit", f["yes_no"], "--out", f["yes_no"] / "fit.nc"],
        lambda f, t: ["agreement", f["yes_no"], "--csv", f["folder"]],
        lambda f, t: ["rank", f["yes_no"], "--csv", f["yes_no"] / "x.csv"],
        lambda f, t: ["demo", "--out", f["yes_no"]],
        lambda f, t: ["report", t, "--out", f["folder"]],
    ],
    ids=["fit-folder", "fit-under-file", "agreement-csv", "rank-csv", "demo", "report"],
)
def test_output_paths_are_checked_before_the_work(tmp_path, files, no_fit, make_args):
    """issue 18, item 7: a bad output path exits 2 at once (it used to fail after the fit,
    or, for a folder, with a traceback)."""
    code, out = run(*make_args(files, tmp_path))
    assert code == 2, out
    assert (
        "is a folder, not a file" in out
        or "is a file, not a folder" in out
        or ("exists and is not a folder" in out)
    )


def test_an_interrupted_fit_leaves_the_previous_netcdf(tmp_path, files, monkeypatch):
    """issue 18, item 7 (in process): Ctrl-C while the netCDF is written exits 130 and
    leaves the previous file intact, with no temporary file."""
    import xarray as xr

    target = tmp_path / "fit.nc"
    target.write_bytes(b"the previous fit")

    def half_written(self, path, *args, **kwargs):
        Path(path).write_bytes(b"CDF half")
        raise KeyboardInterrupt

    monkeypatch.setattr(xr.DataTree, "to_netcdf", half_written)
    code, out = run(
        "fit", files["yes_no"], "-s", "ordinal:no,yes", "--method", "em", "--out", target
    )
    assert code == 130 and "interrupted" in out
    assert target.read_bytes() == b"the previous fit"
    assert no_temp_left(tmp_path)


def test_an_interrupted_csv_leaves_the_previous_file(tmp_path, files, monkeypatch):
    """issue 18, item 7: the same for --csv."""
    target = tmp_path / "agreement.csv"
    target.write_text("previous,table\n")
    original = pl.DataFrame.write_csv

    def half_written(self, file=None, *args, **kwargs):
        if file is None:
            return original(self, *args, **kwargs)
        Path(file).write_text("statistic,est")
        raise KeyboardInterrupt

    monkeypatch.setattr(pl.DataFrame, "write_csv", half_written)
    code, _ = run("agreement", files["yes_no"], "--n-boot", "0", "--csv", target)
    assert code == 130
    assert target.read_text() == "previous,table\n" and no_temp_left(tmp_path)


_SLOW_WRITE = """
import sys, time
import xarray as xr
original = xr.DataTree.to_netcdf
def slow(self, path, *args, **kwargs):
    original(self, path, *args, **kwargs)
    print("NETCDF-WRITTEN", file=sys.stderr, flush=True)
    time.sleep(120)
xr.DataTree.to_netcdf = slow
from raterstats.cli import main
sys.argv = ["raterstats", *sys.argv[1:]]
main()
"""


def test_sigint_while_fit_writes_keeps_the_previous_file(tmp_path, files):
    """issue 18, item 7 (end to end): SIGINT to `raterstats fit --out x.nc` while the new
    netCDF is being written (the write is held open) exits 130 without a traceback; the
    previous x.nc is intact and no temporary file is left."""
    target = tmp_path / "x.nc"
    target.write_bytes(b"known previous content")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _SLOW_WRITE,
            "fit",
            str(files["yes_no"]),
            "-s",
            "ordinal:no,yes",
            "--method",
            "em",
            "--out",
            str(target),
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    seen = []
    assert proc.stderr is not None
    for line in proc.stderr:
        seen.append(line)
        if "NETCDF-WRITTEN" in line:
            break
    else:
        proc.wait(timeout=60)
        pytest.fail("the fit did not reach the write:\n" + "".join(seen))
    assert [p for p in tmp_path.iterdir() if TEMP_MARK in p.name]  # the new file is open
    proc.send_signal(signal.SIGINT)
    _, rest = proc.communicate(timeout=60)
    err = "".join(seen) + rest
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert target.read_bytes() == b"known previous content"
    assert no_temp_left(tmp_path)


# ----------------------------------------------------------------------------- bad usage


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("ordinal:1,1,2", "levels are not distinct"),
        ("foo:1", "unknown scale kind 'foo'"),
        ("nominal:", "every level must be non-empty"),
        ("ordinal:1,,2", "every level must be non-empty"),
        ("Likert5", "did you mean 'likert5'?"),
        ("correctness=", "unknown scale ''"),
    ],
)
def test_bad_scale_specs_are_usage_errors(files, spec, expected):
    """issue 18: a bad --scale exits 2 naming it (`ordinal:1,1,2` was a traceback,
    `nominal:` an 'unknown scale')."""
    code, out = run("validate", files["likert"], "-s", spec)
    assert code == 2 and expected in out and "Traceback" not in out


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("rater", "--filter takes KEY=VALUE, got 'rater'"),
        ("=1", "--filter takes KEY=VALUE"),
        ("rater=", "every value must be non-empty"),
        ("rater=1,,2", "every value must be non-empty"),
        ("raterr=1", "cannot filter on 'raterr'; did you mean 'rater'?"),
        ("repeat=maybe", "repeat takes true or false"),
    ],
)
def test_bad_filters_are_usage_errors(files, spec, expected):
    """issue 18: a malformed --filter exits 2 naming it."""
    code, out = run("validate", files["likert"], "-s", "likert5", "-f", spec)
    assert code == 2 and expected in out


def test_a_filter_on_a_number_like_id_selects_that_id(files):
    """issue 18: `--filter rater=1` selects the id "1" (the value was parsed as the number
    1 and matched nothing), and not "10"."""
    code, out = run(
        "validate",
        files["likert"],
        "-s",
        "likert5",
        "-f",
        "dimension=correctness",
        "-f",
        "rater=1",
        "--json",
    )
    assert code == 0, out
    res = runner.invoke(
        app,
        [
            "validate",
            str(files["likert"]),
            "-s",
            "likert5",
            "-f",
            "dimension=correctness",
            "-f",
            "rater=1,10",
            "--json",
        ],
    )
    summary = json.loads(res.stdout)
    assert summary["n_ratings"] == 6 and summary["n_raters"] == 2
    code, out = run("validate", files["likert"], "-s", "likert5", "-f", "rater=01")
    assert code == 1 and "got '01'; expected a rater in the data ('1', '10', '2')" in out


def test_unknown_model_method_and_sampler(files):
    """issue 18: unknown names exit 2 with the known ones."""
    code, out = run("fit", files["yes_no"], "--model", "nosuchmodel")
    assert code == 2 and "unknown model 'nosuchmodel'" in out
    code, out = run("fit", files["yes_no"], "--model", "ordinal", "--method", "em")
    assert code == 2 and "--method 'em' is not one of nuts, map, advi" in out
    code, out = run("fit", files["yes_no"], "--sampler", "NutPie")
    assert code == 2 and "did you mean 'nutpie'?" in out


@pytest.mark.parametrize(
    ("option", "value"),
    [("--draws", "0"), ("--chains", "-1"), ("--tune", "0"), ("--draws", "many")],
)
def test_bad_sampler_numbers_are_usage_errors(files, no_fit, option, value):
    """issue 18: --draws 0, --chains -1, --tune 0 exit 2 naming the option (a negative
    chain count was an OverflowError, --tune 0 a panic in the sampler)."""
    code, out = run("fit", files["yes_no"], option, value)
    assert code == 2 and f"'{option}'" in out


def test_a_value_error_of_model_fit_is_a_usage_error(files, monkeypatch):
    """issue 18: Model.fit's ValueError on bad settings becomes exit 2 with its message."""
    from raterstats.models import MACE

    def bad_settings(self, ratings, **kwargs):
        raise ValueError("draws must be a positive integer, got 0")

    monkeypatch.setattr(MACE, "fit", bad_settings)
    code, out = run("fit", files["yes_no"], "--out", files["folder"] / "f.nc")
    assert code == 2 and "fit: draws must be a positive integer, got 0" in out


def test_model_input_errors_list_every_problem(files, monkeypatch):
    """issue 18: bad data for a model exit 1 with every problem."""
    from raterstats.models import MACE, ModelInputError

    def cannot(self, ratings, **kwargs):
        raise ModelInputError(["dimension 'x' has one category", "rater 'r1' rated nothing"])

    monkeypatch.setattr(MACE, "fit", cannot)
    code, out = run("fit", files["yes_no"], "--out", files["folder"] / "f.nc")
    assert code == 1
    assert "- dimension 'x' has one category - rater 'r1' rated nothing" in out


def test_an_unexpected_error_is_one_line_unless_debugging(files, monkeypatch):
    """issue 18: an error the command line does not expect is one line, exit 1, and
    RATERSTATS_DEBUG=1 lets its traceback through."""
    import raterstats.cli.study as study

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero\nsecond line")

    monkeypatch.setattr(study, "read_ratings", broken)
    monkeypatch.delenv("RATERSTATS_DEBUG", raising=False)
    res = runner.invoke(app, ["validate", str(files["likert"])])
    assert res.exit_code == 1
    assert (
        res.output.splitlines()[0]
        == "unexpected error: ZeroDivisionError: division by zero second line"
    )
    assert "RATERSTATS_DEBUG=1" in res.output
    monkeypatch.setenv("RATERSTATS_DEBUG", "1")
    res = runner.invoke(app, ["validate", str(files["likert"])])
    assert isinstance(res.exception, ZeroDivisionError)


# ----------------------------------------------------------------------------- filters first


def test_filters_apply_before_validation(files):
    """issue 18: `--filter dimension=correctness` reads a file whose safety ratings are
    invalid; the rows left out are counted in the summary."""
    code, out = run("validate", files["likert"], "-s", "likert5")
    assert code == 1 and "column 'rating': got '9'" in out
    res = runner.invoke(
        app, ["validate", str(files["likert"]), "-s", "likert5", "-f", "dimension=correctness"]
    )
    assert res.exit_code == 0, res.output
    assert "9 rating(s) excluded: filtered by dimension=correctness" in res.stdout
    res = runner.invoke(
        app,
        [
            "agreement",
            str(files["likert"]),
            "-s",
            "likert5",
            "-f",
            "dimension=correctness",
            "-m",
            "percent_agreement",
            "--n-boot",
            "0",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    assert [r["dimension"] for r in json.loads(res.stdout)] == ["correctness"]


def test_a_per_dimension_scale_of_a_filtered_out_dimension_is_not_needed(tmp_path, files):
    """issue 18: a study's scale table may name a dimension that --filter leaves out."""
    study = study_file(
        tmp_path,
        f"""
        data = "{files["likert"].name}"
        [scale]
        correctness = "likert5"
        """,
    )
    code, out = run("validate", "-S", study, "-f", "dimension=correctness")
    assert code == 0, out
    code, out = run("validate", "-S", study)
    assert code == 1 and "a dimension with a declared scale" in out


def test_read_ratings_where_selects_before_validation_and_counts(files):
    """issue 18: read_ratings(where=...) keeps rows by id as stripped text before any
    validation and counts the others; unknown ids and roles are reported."""
    from raterstats import OrdinalScale

    r = read_ratings(
        files["likert"],
        scale=OrdinalScale.likert(5),
        where={"dimension": " correctness ", "rater": ["1", "10"]},
    )
    assert r.n_ratings == 6
    assert [(e.reason, e.n_rows) for e in r.exclusions] == [
        ("filtered by dimension=correctness", 9),
        ("filtered by rater=1,10", 3),
    ]
    with pytest.raises(RatingsError) as info:
        read_ratings(files["likert"], where={"dimension": "Correctness"})
    assert "did you mean 'correctness'?" in str(info.value)
    with pytest.raises(ValueError, match="cannot select rows by 'rating'"):
        read_ratings(files["likert"], where={"rating": "1"})


@settings(max_examples=50, deadline=None)
@given(
    raters=st.lists(
        st.sampled_from(["1", "01", "10", " 1", "a", "A", "1.0"]), min_size=1, max_size=12
    ),
    pick=st.sets(st.sampled_from(["1", "01", "10", "a", "A", "1.0"]), min_size=1, max_size=3),
)
def test_where_is_text_equality_on_stripped_ids(raters, pick):
    """issue 18 (property): where={"rater": ids} keeps exactly the rows whose stripped
    rater id is one of them, counting the rest; an id no row has is a problem."""
    frame = pl.DataFrame(
        {
            "item": [f"i{n}" for n in range(len(raters))],
            "rater": raters,
            "rating": ["1"] * len(raters),
        }
    )
    present = {r.strip() for r in raters}
    try:
        r = read_ratings(frame, where={"rater": sorted(pick)})
    except RatingsError as err:
        missing = pick - present
        assert missing
        for v in missing:
            assert f"got {v!r}; expected a rater in the data" in str(err)
        return
    assert pick <= present
    kept = [x.strip() for x in raters if x.strip() in pick]
    assert sorted(r.data["rater"].to_list()) == sorted(kept)
    dropped = len(raters) - len(kept)
    assert sum(e.n_rows for e in r.exclusions) == dropped


def test_duplicates_option_is_checked(files):
    """issue 18: --duplicates takes error, first, last or repeat."""
    code, out = run("validate", files["likert"], "--duplicates", "First")
    assert code == 2 and "did you mean 'first'?" in out


@pytest.mark.skipif(
    "duplicates" not in inspect.signature(read_ratings).parameters,
    reason="read_ratings(duplicates=...) comes from another branch of issue 18",
)
def test_duplicates_option_reaches_read_ratings(tmp_path):
    """issue 18: --duplicates first keeps one rating of a duplicated unit."""
    path = tmp_path / "dups.csv"
    path.write_text("item,rater,rating\na,x,1\na,x,2\na,y,1\nb,x,1\n")
    assert run("validate", path, "-s", "likert5")[0] == 1
    res = runner.invoke(
        app, ["validate", str(path), "-s", "likert5", "--duplicates", "first", "--json"]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["n_ratings"] == 3


# ----------------------------------------------------------------------------- no traceback


def _hostile(f: dict[str, Path], t: Path) -> list[tuple[list, int, str]]:
    """(arguments, exit code, what the message names) of hostile invocations."""
    empty = t / "empty.csv"
    empty.write_text("")
    binary = t / "binary.csv"
    binary.write_bytes(b"\x00\xff\xfe\x00garbage")
    nonsense = t / "fit.nc"
    nonsense.write_text("not a netcdf file")
    bad_study = t / "bad.toml"
    bad_study.write_text("[fit\nmodel = ")
    typed_study = t / "typed.toml"
    typed_study.write_text('data = 42\nformat = "Wide"\n')
    return [
        (["validate", t / "missing.csv"], 2, "does not exist"),
        (["validate", f["folder"]], 2, "is a folder, not a file"),
        (["validate", empty], 1, "empty.csv"),
        (["validate", binary], 1, "binary.csv"),
        (["validate", f["likert"], "-s", "likert5"], 1, "got '9'"),
        (["validate", f["likert"], "-c", "item=nope"], 1, "'nope'"),
        (["validate", f["likert"], "-c", "itme=item"], 2, "'itme' is not a column role"),
        (["validate", f["likert"], "-s", "ordinal:1,1,2"], 2, "levels are not distinct"),
        (["validate", f["likert"], "-f", "rater"], 2, "--filter takes KEY=VALUE"),
        (["validate", f["likert"], "--collapse", "likert5_to3"], 2, "did you mean 'likert5_to_3'"),
        (["validate", "-S", bad_study], 2, "not valid TOML"),
        (["validate", "-S", typed_study], 2, "data = 42"),
        (["validate", "-S", f["folder"]], 2, "is a folder"),
        (["validate", "-S", t / "nope.toml"], 2, "does not exist"),
        (["validate"], 2, "no ratings file"),
        (["agreement", f["yes_no"], "-m", "fleiss_kapa"], 2, "did you mean 'fleiss_kappa'"),
        (["agreement", f["yes_no"], "--ci", "1.5"], 2, "between 0 and 1"),
        (["agreement", f["yes_no"], "--n-boot", "-1"], 2, "'--n-boot'"),
        (["agreement", f["yes_no"], "--seed", "-1"], 2, "'--seed'"),
        (["fit", f["yes_no"], "--model", "nope"], 2, "unknown model 'nope'"),
        (["fit", f["yes_no"], "--chains", "-1"], 2, "'--chains'"),
        (["fit", f["yes_no"], "-O", "colour=red", "--method", "em"], 2, "colour"),
        (["fit", f["yes_no"], "--out", f["folder"]], 2, "is a folder"),
        (["rank", f["yes_no"], "--method", "best"], 2, "--method 'best' is not one of"),
        (["rank", f["yes_no"], "--score-map", "yes-partially-no"], 2, "yes_partially_no"),
        (["rank", "--fit", t / "missing.nc"], 2, "does not exist"),
        (["rank", "--fit", nonsense], 2, "cannot read"),
        (["rank", "--fit", f["folder"]], 2, "is a folder"),
        (["rank", "--fit", nonsense, "--score", "Latent"], 2, "did you mean 'latent'"),
        (["designs"], 2, "designs needs --fit"),
        (["designs", "--fit", nonsense], 2, "cannot read"),
        (["designs", "--fit", nonsense, "--level-map", "1=a"], 2, "--level-map takes"),
        (["report", t / "nowhere"], 1, "report.md"),
        (["report", t, "--fit", "A=" + str(t / "missing.nc")], 2, "does not exist"),
        (["report", t, "--fit", "nolabel"], 2, "--fit takes KEY=VALUE"),
        (["demo", "--out", f["yes_no"]], 2, "exists and is not a folder"),
        (["demo", "--ordinal-draws", "-1"], 2, "'--ordinal-draws'"),
    ]


def test_no_hostile_invocation_gives_a_traceback(tmp_path, files, no_fit):
    """issue 18: every hostile invocation exits 1 (bad data) or 2 (bad usage), names the
    problem, and shows no traceback."""
    failures = []
    for args, code, expected in _hostile(files, tmp_path):
        res = runner.invoke(app, [str(a) for a in args], terminal_width=200)
        out = " ".join(res.output.replace("│", " ").split())
        ok = (
            isinstance(res.exception, SystemExit)
            and res.exit_code == code
            and expected in out
            and "Traceback" not in out
            and "unexpected error" not in out
        )
        if not ok:
            failures.append((args, res.exit_code, repr(res.exception), out[-300:]))
    assert failures == []


def test_study_file_error_is_a_value_error_with_every_problem():
    """issue 18, item 6: StudyFileError lists the problems, one per line."""
    err = StudyFileError(Path("s.toml"), ["a", "b"])
    assert str(err).splitlines() == [
        "study file s.toml has 2 problems:",
        "  - s.toml: a",
        "  - s.toml: b",
    ]
    assert "rater" in FILTERABLE and "repeat" in FILTERABLE


def test_separator_option_reads_an_undecidable_file_and_a_bad_one_is_usage(tmp_path):
    """issue 18: a delimiter the sniffer cannot decide is given with --separator (the
    suggestion of read_ratings' error is actionable on the command line too); a bad
    separator is bad usage (exit 2), never a traceback."""
    path = tmp_path / "r.csv"
    path.write_text("item|rater|rating\na|x|1\na|y|2\nb|x|3\nb|y|3\n", encoding="utf-8")
    code, out = run("validate", str(path), "--separator", "|", "-s", "ordinal:1,2,3")
    assert code == 0, out
    assert "4" in out
    code, out = run("validate", str(path), "--separator", "ab")
    assert code == 2, out
    assert "separator" in out and "Traceback" not in out
